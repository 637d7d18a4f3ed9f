"""Assembly records are written after the answer, in batches, and none is lost on a clean exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, records_flush
from apps.core.database_url import url_from_database
from apps.layers.services import ItemInput, items_create
from tests.conftest import make_tenant

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
