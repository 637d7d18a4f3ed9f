"""Retrieval's raw-SQL rows (apps/assembly/retrieval.py) decode as the ORM does: the same values, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.assembly.retrieval import add_window, neighbour_turns, search_hits
from apps.engine import Candidate
from apps.engine.candidates import ITEM_FIELDS
from apps.layers.filters import ItemFilters
from apps.layers.models import Item
from tests.assembly.otters_data import otter_turns
from tests.support.api import bulk, layer
from tests.support.tenants import Tenant


def retrieved(filters: ItemFilters, query: str, window: tuple[int, ...] = (), size: int = 0) -> list[Candidate]:
    """The hits and pinned items, their neighbours and the window's turns, as the gather pipeline's
    first three sources read them (apps/assembly/sources/)."""
    hits = search_hits(filters=filters, layer_names={}, query=query, query_vector=None, limit=50)
    known = {c.id: c for c in hits.candidates}
    known.update((c.id, c) for c in neighbour_turns(known, hits.parent_of, filters, {}))
    if window:
        add_window(known, filters.workspace_id, window, size, {}, [], None, hits.floor)
    return list(known.values())


@pytest.mark.django_db
def test_hit_and_neighbour_rows_carry_the_orms_values(tenant: Tenant) -> None:
    start = datetime(2025, 5, 3, 9, 0, 0, 123456, tzinfo=UTC)
    session = otter_turns(tenant, "river", start, timedelta(seconds=1, microseconds=7))
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))
    found = retrieved(filters, "otters")
    assert sorted(c.origin for c in found) == ["keyword", "neighbour", "neighbour"]
    orm = {row["id"]: row for row in Item.objects.filter(layer_id=session).values(*ITEM_FIELDS)}
    for c in found:
        row = orm[c.id]
        assert c.created_at == row["created_at"] and c.created_at.tzinfo is UTC
        assert c.created_at.microsecond == row["created_at"].microsecond != 0
        assert (c.kind, c.layer_id, c.content, c.external_id, c.role) == (
            row["kind"],
            row["layer_id"],
            row["content"],
            row["external_id"],
            row["role"],
        )


@pytest.mark.django_db
def test_pinned_items_come_once_and_only_from_the_filtered_layers(tenant: Tenant) -> None:
    inside = layer(tenant, "project", tenant.root.pk, name="inside")
    outside = layer(tenant, "project", tenant.root.pk, name="outside")
    pinned_hit, pinned_other, plain = bulk(
        tenant,
        inside,
        [
            {"kind": "memory", "type": "fact", "content": "Otters hold hands while sleeping.", "pinned": True},
            {"kind": "memory", "type": "fact", "content": "The deploy freeze starts Friday.", "pinned": True},
            {"kind": "memory", "type": "fact", "content": "Otters eat sea urchins."},
        ],
    )
    (pinned_outside,) = bulk(
        tenant, outside, [{"kind": "memory", "type": "fact", "content": "Otters are mustelids.", "pinned": True}]
    )
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(inside,))
    found = retrieved(filters, "otters")
    origins = {c.id: c.origin for c in found}
    assert len(found) == len(origins) == 3
    assert origins == {pinned_hit: "keyword", pinned_other: "pinned", plain: "keyword"}
    assert pinned_outside not in origins


@pytest.mark.django_db
def test_the_window_is_the_newest_messages_with_the_orms_values(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="window")
    start = datetime(2025, 5, 3, 9, 0, 0, 250000, tzinfo=UTC)
    bulk(
        tenant,
        session,
        [
            {
                "kind": "message",
                "role": "user",
                "content": f"turn {i}",
                "created_at": (start + timedelta(minutes=i)).isoformat(),
            }
            for i in range(6)
        ],
    )
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))
    found = retrieved(filters, "", window=(session,), size=4)
    newest = list(Item.objects.filter(layer_id=session).order_by("-created_at", "-id").values(*ITEM_FIELDS)[:4])
    assert [(c.id, c.distance, c.origin) for c in found] == [
        (row["id"], distance, "conversation") for distance, row in enumerate(newest)
    ]
    assert [c.created_at for c in found] == [row["created_at"] for row in newest]
    assert all(
        c.created_at.tzinfo is UTC and c.metadata == row["metadata"] for c, row in zip(found, newest, strict=True)
    )
