"""Deleting a layer while background work writes rows that point at it or its items (issue 26,
finding 17: an intermittent 500).

The interleaving is forced: a background-like writer inserts a row referencing the layer or one of
its items and holds its transaction open; the DELETE starts, and once it waits on the writer's lock
the writer commits. The cascade used to have collected the related rows before the writer's row was
visible, so the deferred foreign-key check failed at the delete's commit (IntegrityError: a 500).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from apps.conversations.communities import communities_replace
from apps.conversations.models import Community, ItemAccess
from apps.conversations.services import items_record_access
from apps.layers.models import Item, Layer
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def _layer_with_items(tenant: Tenant) -> tuple[int, list[int]]:
    body = {"kind": "project", "name": "doomed", "parent": tenant.root.pk}
    layer = tenant.client.post("/api/v1/layers/", body, format="json").json()["id"]
    session = tenant.client.post(
        "/api/v1/layers/", {"kind": "session", "name": "s", "parent": layer}, format="json"
    ).json()["id"]
    items = [{"kind": "message", "role": "user", "content": f"Turn {i}."} for i in range(3)]
    created = tenant.client.post("/api/v1/items/bulk/", {"layer": session, "items": items}, format="json")
    assert created.status_code == 201
    return layer, created.json()["ids"]


def _delete_waiting_on(tenant: Tenant, layer: int, write: Callable[[], None]) -> int:
    """DELETE the layer while `write` runs in another transaction, committed once the delete waits on it."""
    written, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with transaction.atomic():
                write()
                written.set()
                release.wait(30)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            written.set()
        finally:
            connection.close()

    status: list[int] = []

    def deleter() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tenant.secret}")
        try:
            status.append(client.delete(f"/api/v1/layers/{layer}/").status_code)
        except BaseException as exc:  # noqa: BLE001 - the test client re-raises a view's exception
            errors.append(exc)
        finally:
            connection.close()

    write_thread = threading.Thread(target=writer)
    write_thread.start()
    assert written.wait(30)
    delete_thread = threading.Thread(target=deleter)
    delete_thread.start()

    def delete_waits_on_a_lock() -> bool:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            return bool(cur.fetchone()[0])

    try:
        wait_until(delete_waits_on_a_lock, timeout=30, what="the delete to wait on the writer")
    finally:
        release.set()
        write_thread.join(30)
        delete_thread.join(30)
    assert not errors, errors
    return status[0]


def test_a_layer_deleted_while_the_access_flush_counts_one_of_its_items(tenant: Tenant) -> None:
    layer, ids = _layer_with_items(tenant)
    status = _delete_waiting_on(tenant, layer, lambda: items_record_access(counts={ids[0]: 1}, at=timezone.now()))
    assert status == 204
    assert not Layer.objects.filter(pk=layer).exists() and not Item.objects.filter(pk__in=ids).exists()
    assert not ItemAccess.objects.filter(item_id__in=ids).exists()


def test_a_layer_deleted_while_its_sessions_communities_are_recomputed(tenant: Tenant) -> None:
    layer, ids = _layer_with_items(tenant)
    session = Layer.objects.get(parent_id=layer)

    def recompute() -> None:  # what the community sweep writes (it locks the session's row first)
        group = {"kind": "task", "key": "T-1", "title": "Task T-1", "summary": "Turns.", "summary_tokens": 1}
        now = timezone.now()
        communities_replace(layer=session, groups=[{**group, "first_at": now, "last_at": now, "members": ids}], now=now)

    assert _delete_waiting_on(tenant, layer, recompute) == 204
    assert not Community.objects.filter(layer_id=session.pk).exists()
