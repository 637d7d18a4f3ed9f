"""ItemSearch, keyword search's narrow copy of the items, follows every write to layers_item (by triggers)."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.utils import timezone

from apps.layers.models import Item, ItemSearch, Layer
from apps.layers.services import ItemInput, item_delete, item_update, items_create, layer_create, layer_delete
from apps.workspaces.models import Workspace
from tests.support.tenants import Tenant

COPIED = ("workspace_id", "layer_id", "kind", "type", "created_at", "confidence", "group_id")


def _copies(workspace: Workspace) -> dict[int, dict[str, Any]]:
    """Each copy of the workspace's items, beside what it should hold (from layers_item itself)."""
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT s.item_id, s.search_vector::text, s.length, {", ".join("s." + c for c in COPIED)},
                   i.search_vector::text, length(i.search_vector), {", ".join("i." + c for c in COPIED)}
            FROM layers_itemsearch s LEFT JOIN layers_item i ON i.id = s.item_id
            WHERE s.workspace_id = %s
            """,
            [workspace.pk],
        )
        width = 2 + len(COPIED)
        return {row[0]: {"copy": row[1 : 1 + width], "item": row[1 + width :]} for row in cur.fetchall()}


def _in_step(workspace: Workspace) -> bool:
    copies = _copies(workspace)
    items = set(Item.objects.filter(workspace=workspace).values_list("pk", flat=True))
    return set(copies) == items and all(c["copy"] == c["item"] for c in copies.values())


def test_created_items_are_copied_with_their_vector_length_and_filter_columns(tenant: Tenant) -> None:
    items = items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", title="Billing", content="Invoices fail on Fridays.", confidence=0.7),
            ItemInput(kind="package", content="Deploy runbook.", group_id="ops"),
        ],
    )
    copies = _copies(tenant.workspace)
    assert set(copies) == {item.pk for item in items} and _in_step(tenant.workspace)
    first = ItemSearch.objects.get(pk=items[0].pk)
    assert (first.kind, first.type, first.confidence, first.length) == ("memory", "fact", 0.7, 4)
    assert ItemSearch.objects.get(pk=items[1].pk).group_id == "ops"


def test_an_update_of_the_text_or_a_filter_column_is_copied(tenant: Tenant) -> None:
    (item,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="entity", content="The cache warms slowly.")]
    )
    item_update(item=item, changes={"content": "Zanzibar replication lags.", "type": "fact", "confidence": 0.2})
    copy = ItemSearch.objects.get(pk=item.pk)
    assert "zanzibar" in str(copy.search_vector) and "cach" not in str(copy.search_vector)
    assert (copy.type, copy.confidence) == ("fact", 0.2) and _in_step(tenant.workspace)
    later = timezone.now()
    Item.objects.filter(pk=item.pk).update(title="Quokka", created_at=later, group_id="g1")  # no signal, no service
    copy = ItemSearch.objects.get(pk=item.pk)
    assert "quokka" in str(copy.search_vector) and copy.created_at == later and copy.group_id == "g1"
    assert _in_step(tenant.workspace)


def test_an_update_of_other_columns_leaves_the_copy_alone(tenant: Tenant) -> None:
    (item,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Alerts page the on-call.")]
    )
    with connection.cursor() as cur:
        cur.execute("SELECT xmin::text FROM layers_itemsearch WHERE item_id = %s", [item.pk])
        (before,) = cur.fetchone()
        cur.execute("UPDATE layers_item SET importance = 0.9, pinned = true, embedding = NULL WHERE id = %s", [item.pk])
        cur.execute("SELECT xmin::text FROM layers_itemsearch WHERE item_id = %s", [item.pk])
        (after,) = cur.fetchone()
    assert before == after  # the row was not rewritten


def test_deleted_items_layers_and_workspaces_take_their_copies_with_them(tenant: Tenant) -> None:
    team = layer_create(workspace=tenant.workspace, kind="org", name="eng", parent=tenant.root)
    kept, deleted = items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", content="kept"),
            ItemInput(kind="memory", type="fact", content="gone"),
        ],
    )
    items_create(layer=team, items=[ItemInput(kind="memory", type="fact", content=f"team note {n}") for n in range(3)])
    assert len(_copies(tenant.workspace)) == 5
    item_delete(item=deleted)
    assert len(_copies(tenant.workspace)) == 4
    layer_delete(layer=Layer.objects.get(pk=team.pk))
    assert set(_copies(tenant.workspace)) == {kept.pk} and _in_step(tenant.workspace)
    Item.objects.filter(pk=kept.pk).delete()
    assert _copies(tenant.workspace) == {}


def test_bulk_created_items_are_copied(tenant: Tenant) -> None:
    now = timezone.now()
    Item.objects.bulk_create(
        Item(workspace=tenant.workspace, layer=tenant.root, kind="message", content=f"turn {n} about backups",
             content_hash=str(n), created_at=now)
        for n in range(50)
    )  # fmt: skip
    assert len(_copies(tenant.workspace)) == 50 and _in_step(tenant.workspace)
