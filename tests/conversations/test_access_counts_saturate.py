"""The shared access flush: a count at the integer limit saturates, and one bad row never loses
another tenant's counts (issue 26, finding 11)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.conversations.models import ItemAccess
from apps.conversations.services import MAX_ACCESS_COUNT, items_record_access
from apps.conversations.tasks import record_item_access
from tests.conversations.sessions import make_session, messages
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def _imported_message_at_the_limit(tenant: Tenant) -> int:
    session = make_session(tenant, external_id="origin")
    messages(tenant, session, ["The deploy runs at noon."])
    graph = tenant.client.get(f"/api/v1/layers/{session}/export/").json()
    graph["messages"][0]["access_count"] = 2**31 - 1
    graph["messages"][0]["last_accessed_at"] = timezone.now().isoformat()
    response = tenant.client.post(
        "/api/v1/layers/import/", {"parent": tenant.root.pk, "name": "copy", "graph": graph}, format="json"
    )
    assert response.status_code == 201, response.content
    items = tenant.client.get("/api/v1/items/", {"layer": response.json()["layer"]}).json()["results"]
    assert items[0]["access_count"] == 2**31 - 1
    return int(items[0]["id"])


def test_a_count_at_the_limit_saturates_and_the_other_tenants_counts_are_kept(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    full = _imported_message_at_the_limit(tenant)
    other = messages(other_tenant, make_session(other_tenant), ["Another tenant's turn."])[0]
    assert items_record_access(counts={full: 3, other: 2}, at=timezone.now()) == 2  # one shared flush
    counts = dict(ItemAccess.objects.filter(item_id__in=[full, other]).values_list("item_id", "access_count"))
    assert counts == {full: MAX_ACCESS_COUNT, other: 2}


def test_one_bad_row_in_a_flush_leaves_the_others_written(tenant: Tenant, other_tenant: Tenant) -> None:
    mine = messages(tenant, make_session(tenant), ["A turn."])[0]
    theirs = messages(other_tenant, make_session(other_tenant), ["Their turn."])[0]
    # Celery carries the counts as JSON: a negative one breaks the table's check, for its row only.
    assert record_item_access.run({str(mine): -5, str(theirs): 4}, timezone.now().isoformat()) == 1
    assert not ItemAccess.objects.filter(item_id=mine).exists()
    assert ItemAccess.objects.get(item_id=theirs).access_count == 4


@pytest.mark.django_db(transaction=True)
def test_a_flush_that_waits_past_its_lock_timeout_is_not_retried_row_by_row(tenant: Tenant) -> None:
    ids = messages(tenant, make_session(tenant), ["One.", "Two.", "Three."])
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:  # a delete under way holds the rows (layers.services.layer_delete)
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("SELECT id FROM layers_item WHERE id = ANY(%s) FOR UPDATE", [ids])
            locked.set()
            release.wait(30)
        connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(30)
        with connection.cursor() as cur:
            cur.execute("SET lock_timeout = '200ms'")
        with CaptureQueriesContext(connection) as queries:
            assert items_record_access(counts=dict.fromkeys(ids, 1), at=timezone.now()) == 0
        assert len([q for q in queries.captured_queries if "layers_itemaccess" in q["sql"]]) == 1  # one wait, not 4
    finally:
        release.set()
        holder.join(30)
        with connection.cursor() as cur:
            cur.execute("RESET lock_timeout")
