"""Reads for the layer page: the layer, its children, a page of its items, its summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Q

from apps.layers import selectors as layers
from apps.layers.models import ITEM_TYPES, Item, Layer, RelationshipKind
from apps.layers.selectors import EXCERPT_CHARS
from apps.summaries.models import Summary
from apps.summaries.selectors import generic_summaries
from apps.web.selectors.proposals import ProposalRow, proposal_row
from apps.workspaces.models import Workspace

PAGE_SIZE = 25
PROPOSALS_SHOWN = 20


@dataclass(frozen=True)
class ItemFilter:
    q: str = ""
    kind: str = ""
    type: str = ""
    page: str = "1"


@dataclass(frozen=True)
class RelatedRow:
    """One relationship as an item's row shows it: which way it points, and the item at the other end."""

    id: int
    kind: str
    kind_label: str
    outgoing: bool  # the row's item is the source
    other_id: int
    other_title: str
    other_excerpt: str
    other_layer_id: int
    other_layer_name: str


def layer_item(*, workspace: Workspace, layer: Layer, item_id: int) -> Item | None:
    """One item of the layer as its row shows it (pending flag and relationships), or None."""
    item = layers.layer_items_shown(workspace=workspace, layer=layer).filter(pk=item_id).first()
    if item is not None:
        item.relations = item_relationships(workspace=workspace, item_ids=[item.pk]).get(item.pk, [])  # type: ignore[attr-defined]
    return item


def item_relationships(*, workspace: Workspace, item_ids: list[int]) -> dict[int, list[RelatedRow]]:
    """The relationships of these items, by item, newest first, each with the other end's excerpt (one query)."""
    wanted = set(item_ids)
    rows = layers.relationships_of_items(workspace=workspace, item_ids=wanted)
    labels = dict(RelationshipKind.choices)
    found: dict[int, list[RelatedRow]] = {}
    for row in rows:
        for here, there, outgoing in (("source", "target", True), ("target", "source", False)):
            if row[f"{here}_id"] not in wanted:
                continue
            excerpt = row[f"{there}_excerpt"]
            found.setdefault(row[f"{here}_id"], []).append(
                RelatedRow(
                    id=row["id"],
                    kind=row["kind"],
                    kind_label=labels.get(row["kind"], row["kind"]),
                    outgoing=outgoing,
                    other_id=row[f"{there}_id"],
                    other_title=row[f"{there}__title"],
                    other_excerpt=excerpt if len(excerpt) <= EXCERPT_CHARS else excerpt[: EXCERPT_CHARS - 1] + "…",
                    other_layer_id=row[f"{there}__layer_id"],
                    other_layer_name=row[f"{there}__layer__name"],
                )
            )
    return found


def layer_items(*, workspace: Workspace, layer: Layer, filters: ItemFilter) -> Page[Any]:
    """A page of the layer's items, pinned first then newest, each with its relationships; never loads vectors.

    Two queries for the rows (count, page) and one for their relationships, whatever the page size.
    """
    items = layers.layer_items_shown(
        workspace=workspace, layer=layer, q=filters.q, kind=filters.kind, type=filters.type
    ).defer("metadata")
    page = Paginator(items, PAGE_SIZE).get_page(filters.page)
    rows: list[Item] = list(page.object_list)
    page.object_list = rows
    relations = item_relationships(workspace=workspace, item_ids=[item.pk for item in rows])
    for item in rows:
        item.relations = relations.get(item.pk, [])  # type: ignore[attr-defined]
    return page


def layer_item_page(*, workspace: Workspace, layer: Layer, item: Item) -> int:
    """The page of the layer's list (unfiltered: pinned first, then newest) that shows `item` (one count)."""
    before = layers.layer_items_shown(workspace=workspace, layer=layer).filter(
        Q(pinned__gt=item.pinned)
        | Q(pinned=item.pinned, created_at__gt=item.created_at)
        | Q(pinned=item.pinned, created_at=item.created_at, id__gt=item.pk)
    )
    return before.count() // PAGE_SIZE + 1


def layer_item_types(*, layer: Layer) -> list[str]:
    """The types the type filter offers: every type a kind takes, and any other the layer's items have
    (a document's type is free); one query."""
    known = {t for types in ITEM_TYPES.values() for t in types if t}
    return sorted(known | layers.layer_item_types(layer=layer))


def layer_figures(*, layer: Layer) -> dict[str, int]:
    """Items, pinned, pending an embedding, relationships (two queries)."""
    counts = layers.layer_item_counts(layer=layer)
    return {
        "items": counts["total"],
        "pinned": counts["pinned"],
        "pending": counts["pending_embedding"],
        "relationships": counts["relationships"],
    }


def layer_summary_rows(*, layer: Layer) -> list[Summary]:
    """The three generic summaries, shortest first."""
    return generic_summaries(layer_id=layer.pk)


def layer_proposals(*, workspace: Workspace, layer: Layer) -> list[ProposalRow]:
    """The layer's pending supersession proposals, newest first (one query)."""
    found = layers.proposals_list(workspace=workspace, state="pending", layer_id=layer.pk)[:PROPOSALS_SHOWN]
    return [proposal_row(p) for p in found]
