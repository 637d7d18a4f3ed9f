"""Assembly records are written after the answer, in batches, and none is lost on a clean exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, record_writer, records_flush
from apps.assembly.services.record_writer import Prepare
from apps.core.database_url import url_from_database
from apps.layers.services import ItemInput, items_create
from apps.workspaces.services import api_key_create
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)

BOOT = "import django, os\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'contextarch.settings')\ndjango.setup()\n"
SCRIPT = r"""
import json, sys
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.workspaces.models import Workspace
workspace = Workspace.objects.get(pk=int(sys.argv[1]))
layer = int(sys.argv[2])
ids = [context_assemble(workspace=workspace, params=ContextParams(layer_id=layer, query=f"backups kept {n}",
       token_budget=40, timeout_ms=0)).trace_id for n in range(int(sys.argv[3]))]
print(json.dumps(ids))
"""


def test_it_writes_the_records_off_the_request_thread_with_timings_and_warnings() -> None:
    tenant = make_tenant("writer")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    assert not connection.in_atomic_block  # the queued path, as in a server
    results = [
        context_assemble(
            workspace=tenant.workspace,
            params=ContextParams(layer_id=tenant.root.pk, query=f"backups {n}", token_budget=40, profile="nobody"),
        )
        for n in range(5)
    ]
    records_flush()
    records = {str(r.trace_id): r for r in AssemblyRecord.objects.filter(workspace=tenant.workspace)}
    assert set(records) == {r.trace_id for r in results}
    for result in results:
        record = records[result.trace_id]
        assert record.warnings == list(result.warnings) and any("unknown profile" in w for w in record.warnings)
        assert {"resolve", "keyword_search", "ranking", "packing", "record"} <= set(record.timings)
        assert record.assembly_cache_hit is False


def test_it_loses_no_queued_record_when_the_process_exits() -> None:
    tenant = make_tenant("exit")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    env = {**os.environ, "DATABASE_URL": url_from_database(connection.settings_dict)}
    done = subprocess.run(
        [sys.executable, "-c", BOOT + SCRIPT, str(tenant.workspace.pk), str(tenant.root.pk), "40"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    stored = set(AssemblyRecord.objects.filter(workspace=tenant.workspace).values_list("trace_id", flat=True))
    assert len(ids) == 40 and {str(i) for i in stored} == set(ids)


def _queued_fields(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], Prepare]]:
    """The (fields, prepare) pairs the service hands to the writer, kept instead of written."""
    queued: list[tuple[dict[str, Any], Prepare]] = []
    monkeypatch.setattr(record_writer.WRITER, "put", lambda fields, prepare: queued.append((fields, prepare)))
    return queued


def _stored(record: AssemblyRecord) -> dict[str, Any]:
    """Every column of a record except its own identity (id, trace id, insert time)."""
    skip = {"id", "trace_id", "created_at"}
    return {f.attname: getattr(record, f.attname) for f in AssemblyRecord._meta.concrete_fields if f.name not in skip}


@pytest.mark.django_db
def test_the_hand_written_insert_stores_what_the_orm_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant("same")
    key = api_key_create(workspace=tenant.workspace, name="agent").api_key
    items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", content=f"Backups are kept {n} days — «nightly» ✓ {n / 7}.")
            for n in range(30)
        ],
    )
    queued = _queued_fields(monkeypatch)
    params = ContextParams(
        layer_id=tenant.root.pk,
        query="backups with password=hunter2 kept ✓",
        token_budget=60,
        group_id="team-ü",
        agent_type="coder",
        iteration=3,
        profile="nobody",
        timeout_ms=0,  # never partial, so the second answer comes from the cache
    )
    first = context_assemble(workspace=tenant.workspace, params=params, api_key=key)
    again = context_assemble(workspace=tenant.workspace, params=params, api_key=key)
    assert again.cached and len(queued) == 2  # a fresh record and a cache hit's
    for fields, prepare in queued:
        reference = AssemblyRecord.objects.bulk_create([AssemblyRecord(**prepare(fields))])[0]
        record_writer._insert([prepare({**fields, "trace_id": uuid.uuid4()})])
        written = AssemblyRecord.objects.exclude(pk=reference.pk).get(workspace=tenant.workspace, pk__gt=reference.pk)
        reference.refresh_from_db()
        assert _stored(written) == _stored(reference)
        assert abs(written.created_at - reference.created_at) < timedelta(seconds=5)
        AssemblyRecord.objects.filter(pk__in=[reference.pk, written.pk]).delete()
    fresh = _stored(AssemblyRecord(**queued[0][1](queued[0][0])))
    assert fresh["api_key_id"] == key.pk and fresh["iteration"] == 3 and fresh["group_id"] == "team-ü"
    assert first.trace_id == str(queued[0][0]["trace_id"])


def test_a_record_that_cannot_be_stored_loses_only_itself() -> None:
    tenant = make_tenant("bad")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    with pytest.MonkeyPatch.context() as patch:
        queued = _queued_fields(patch)
        for n in range(3):
            context_assemble(
                workspace=tenant.workspace,
                params=ContextParams(layer_id=tenant.root.pk, query=f"backups {n}", token_budget=40, timeout_ms=0),
            )
    bad = {**queued[1][0], "model": "m" * 101}  # longer than the column: the database refuses it
    record_writer.RecordWriter._write([queued[0], (bad, queued[1][1]), queued[2]])
    stored = set(AssemblyRecord.objects.filter(workspace=tenant.workspace).values_list("trace_id", flat=True))
    assert stored == {queued[0][0]["trace_id"], queued[2][0]["trace_id"]}
