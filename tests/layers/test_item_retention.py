"""Item retention: messages of closed sessions past messages_retention_days and items past their layer
kind's TTL are swept by the hourly sweep; open sessions, recent and pinned items, and other kinds stay."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.core.versions import content_version_peek
from apps.layers.models import Item, Layer
from apps.layers.retention import items_expire
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db


def layer(tenant: Tenant, kind: str, name: str) -> Layer:
    parent = tenant.root
    for step in ("project", "multi_session", "session"):
        if kind == step:
            break
        parent = layer_create(workspace=tenant.workspace, kind=step, name=f"{name} {step}", parent=parent)
    return layer_create(workspace=tenant.workspace, kind=kind, name=name, parent=parent)


def put(into: Layer, days_ago: float, content: str, kind: str = "message", **extra: Any) -> Item:
    role = "user" if kind == "message" else ""
    data = ItemInput(
        kind=kind, content=content, role=role, created_at=timezone.now() - timedelta(days=days_ago), **extra
    )
    (item,) = items_create(layer=into, items=[data])
    return item


def settings_patch(tenant: Tenant, body: dict[str, Any]) -> Any:
    return admin_client(tenant).patch("/api/v1/workspace/", body, format="json")


def left(*items: Item) -> set[int]:
    return set(Item.objects.filter(pk__in=[i.pk for i in items]).values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)  # each batch commits and counts the content version
def test_old_messages_of_a_closed_session_go_and_recent_ones_and_open_sessions_stay(tenant: Tenant) -> None:
    closed = layer(tenant, "session", "closed")  # newest message 10 days ago: closed after 7
    old = put(closed, 40, "we talked about the lighthouse budget")
    pinned = put(closed, 41, "the pinned opening message", pinned=True)
    recent = put(closed, 10, "a message within the retention")
    note = put(closed, 60, "a memory of the closed session", kind="memory", type="fact")
    still_open = layer(tenant, "session", "open")
    old_but_open = put(still_open, 50, "an old message of a session still in use")
    put(still_open, 1, "yesterday's message")
    assert items_expire() == 0  # no retention set: everything is kept
    response = settings_patch(tenant, {"messages_retention_days": 30})
    assert response.status_code == 200, response.json()
    assert response.json()["messages_retention_days"] == 30
    version = content_version_peek(tenant.workspace.pk)

    assert items_expire() == 1
    assert left(old, pinned, recent, note, old_but_open) == {pinned.pk, recent.pk, note.pk, old_but_open.pk}
    assert content_version_peek(tenant.workspace.pk) != version  # cached contexts are not served again
    assert items_expire() == 0

    assert settings_patch(tenant, {"messages_retention_days": None}).json()["messages_retention_days"] is None
    put(closed, 400, "a very old message")
    assert items_expire() == 0  # null: kept forever


def test_a_ttl_per_layer_kind_sweeps_only_that_kind_and_spares_other_workspaces(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    session = layer(tenant, "session", "chat")
    project = layer(tenant, "project", "apollo")
    expired = [put(session, 8, "an old session message"), put(session, 9, "old notes", kind="memory", type="fact")]
    fresh = put(session, 2, "a fresh session message")
    project_doc = put(project, 90, "the project charter", kind="document", type="doc")
    theirs = put(layer(other_tenant, "session", "theirs"), 90, "another workspace's message")
    response = settings_patch(tenant, {"layer_kind_ttl_days": {"session": 5}})
    assert response.status_code == 200, response.json()
    assert response.json()["layer_kind_ttl_days"] == {"session": 5}

    assert items_expire(batch=1) == 2  # in batches of one
    assert left(*expired, fresh, project_doc, theirs) == {fresh.pk, project_doc.pk, theirs.pk}

    assert settings_patch(tenant, {"layer_kind_ttl_days": {}}).json()["layer_kind_ttl_days"] == {}
    put(session, 30, "kept again")
    assert items_expire() == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"messages_retention_days": 0}, "invalid_messages_retention_days"),
        ({"messages_retention_days": 3651}, "invalid_messages_retention_days"),
        ({"messages_retention_days": "soon"}, "invalid_messages_retention_days"),
        ({"layer_kind_ttl_days": {"sessions": 5}}, "invalid_layer_kind"),
        ({"layer_kind_ttl_days": {"session": 0}}, "invalid_layer_kind_ttl_days"),
        ({"layer_kind_ttl_days": {"session": "a month"}}, "invalid_layer_kind_ttl_days"),
        ({"layer_kind_ttl_days": ["session"]}, "invalid_layer_kind_ttl_days"),
        ({"layer_kind_ttl_days": None}, "invalid_layer_kind_ttl_days"),
    ],
)
def test_invalid_item_retention_is_refused_with_its_code(tenant: Tenant, body: dict[str, Any], code: str) -> None:
    response = settings_patch(tenant, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code, response.json()
    shown = admin_client(tenant).get("/api/v1/workspace/").json()
    assert (shown["messages_retention_days"], shown["layer_kind_ttl_days"]) == (None, {})


def test_the_sweep_is_scheduled_hourly() -> None:
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["expire-items"] == {
        "task": "apps.layers.tasks.expire_items",
        "schedule": 3600.0,
    }
