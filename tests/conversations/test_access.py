"""Access count and last access: updated when messages are served, in one batched upsert after
the response (never inside the request), in ItemAccess, never rewriting the items themselves."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import ItemAccess
from apps.conversations.services import items_record_access
from apps.core.database_url import url_from_database
from apps.layers.models import Item
from tests.conversations.sessions import messages
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_serving_messages_counts_their_access_after_the_response(
    tenant: Tenant, session: int, wait_background: object
) -> None:
    ids = messages(tenant, session, ["The deploy runs at noon.", "Deploys need a green build.", "Unrelated turn."])
    wait_background()  # type: ignore[operator]  # embeddings and communities of the new messages
    ask = {"layer": session, "query": "deploy", "token_budget": 2000}
    with CaptureQueriesContext(connection) as queries:
        body = tenant.client.post("/api/v1/context/", ask, format="json").json()
    assert not [q for q in queries.captured_queries if "itemaccess" in q["sql"]]  # not in the request
    served = [c["id"] for c in body["chunks"] if c["source"] == "item"]
    assert set(ids) <= set(served)
    wait_background()  # type: ignore[operator]
    rows = {a.item_id: a for a in ItemAccess.objects.filter(item_id__in=ids)}
    assert all(rows[i].access_count == 1 and rows[i].last_accessed_at is not None for i in ids)
    updated = {i.pk: i.updated_at for i in Item.objects.filter(pk__in=ids)}
    first_access = rows[ids[0]].last_accessed_at
    tenant.client.post("/api/v1/context/", ask, format="json")  # a cache hit serves them again
    tenant.client.get(f"/api/v1/history/?ids={ids[0]}")  # so does the history tool
    wait_background()  # type: ignore[operator]
    again = ItemAccess.objects.get(item_id=ids[0])
    assert again.access_count == 3 and again.last_accessed_at > first_access
    assert {i.pk: i.updated_at for i in Item.objects.filter(pk__in=ids)} == updated  # items untouched


def test_one_update_records_a_whole_batch(tenant: Tenant, session: int) -> None:
    ids = messages(tenant, session, ["a turn", "another turn"])
    from django.utils import timezone

    now = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        assert items_record_access(counts={ids[0]: 2, ids[1]: 1}, at=now) == 2
    assert len(queries.captured_queries) == 1
    counts = dict(ItemAccess.objects.filter(item_id__in=ids).values_list("item_id", "access_count"))
    assert counts == {ids[0]: 2, ids[1]: 1}
    assert items_record_access(counts={ids[0]: 1, 10**12: 1}, at=now) == 1  # a deleted item is skipped
    assert ItemAccess.objects.get(item_id=ids[0]).access_count == 3


def test_the_items_api_shows_access(tenant: Tenant, session: int) -> None:
    from django.utils import timezone

    (item,) = messages(tenant, session, ["a turn"])
    items_record_access(counts={item: 4}, at=timezone.now())
    body = tenant.client.get(f"/api/v1/items/{item}/").json()
    assert body["access_count"] == 4 and body["last_accessed_at"] is not None


def test_the_celery_task_takes_the_ids_as_json_keys(tenant: Tenant, session: int) -> None:
    from apps.conversations.tasks import record_item_access

    (item,) = messages(tenant, session, ["a turn"])
    assert record_item_access.run({str(item): 2}, "2026-01-02T03:04:05+00:00") == 1
    row = ItemAccess.objects.get(item_id=item)
    assert row.access_count == 2 and row.last_accessed_at.isoformat() == "2026-01-02T03:04:05+00:00"


def test_accesses_of_a_whole_burst_are_written_once_and_none_is_lost_at_exit(tenant: Tenant, session: int) -> None:
    ids = messages(tenant, session, ["a turn", "another turn"])
    script = (
        "import django, os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'contextarch.settings')\n"
        "django.setup()\n"
        "from apps.conversations import access\n"
        "for _ in range(5):\n"
        "    access.note_served([int(i) for i in sys.argv[1:]])\n"
        "from apps.core import background\n"
        "print(len(background._later))\n"
    )
    env = {**os.environ, "DATABASE_URL": url_from_database(connection.settings_dict)}
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, ids)],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"  # one flush waits for the whole burst
    counts = dict(ItemAccess.objects.filter(item_id__in=ids).values_list("item_id", "access_count"))
    assert counts == {ids[0]: 5, ids[1]: 5}  # written at exit, before its delay ran out
