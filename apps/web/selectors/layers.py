"""Reads for the layer page: the layer, its children, a page of its items, its summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet
from django.db.models.functions import Substr

from apps.layers.models import ITEM_TYPES, Item, Layer, Relationship, RelationshipKind
from apps.summaries.models import Summary
from apps.workspaces.models import Workspace

PAGE_SIZE = 25


@dataclass(frozen=True)
class ItemFilter:
    q: str = ""
    kind: str = ""
    type: str = ""
    page: str = "1"


def layer_ancestors(*, layer: Layer) -> list[Layer]:
    """Root first, the layer's parent last (at most five queries: the hierarchy is six deep)."""
    chain: list[Layer] = []
    current = layer.parent
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain[::-1]


def layer_children(*, layer: Layer) -> list[Layer]:
    return list(layer.children.annotate(item_count=Count("items")).order_by("kind", "name"))


EXCERPT_CHARS = 160


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


def _layer_items(*, workspace: Workspace, layer: Layer) -> QuerySet[Item]:
    pending = ExpressionWrapper(Q(embedding__isnull=True), output_field=BooleanField())
    return (
        Item.objects.filter(workspace=workspace, layer=layer)
        .defer("embedding", "search_vector")
        .annotate(pending=pending)
        .order_by("-pinned", "-created_at", "-id")
    )


def layer_item(*, workspace: Workspace, layer: Layer, item_id: int) -> Item | None:
    """One item of the layer as its row shows it (pending flag and relationships), or None."""
    item = _layer_items(workspace=workspace, layer=layer).filter(pk=item_id).first()
    if item is not None:
        item.relations = item_relationships(workspace=workspace, item_ids=[item.pk]).get(item.pk, [])  # type: ignore[attr-defined]
    return item


def item_relationships(*, workspace: Workspace, item_ids: list[int]) -> dict[int, list[RelatedRow]]:
    """The relationships of these items, by item, newest first, each with the other end's excerpt (one query)."""
    wanted = set(item_ids)
    if not wanted:
        return {}
    rows = (
        Relationship.objects.filter(workspace=workspace)
        .filter(Q(source_id__in=wanted) | Q(target_id__in=wanted))
        .annotate(
            source_excerpt=Substr("source__content", 1, EXCERPT_CHARS + 1),
            target_excerpt=Substr("target__content", 1, EXCERPT_CHARS + 1),
        )
        .values(
            "id",
            "kind",
            "source_id",
            "target_id",
            "source_excerpt",
            "target_excerpt",
            "source__title",
            "target__title",
            "source__layer_id",
            "target__layer_id",
            "source__layer__name",
            "target__layer__name",
        )
        .order_by("-created_at", "-id")
    )
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
    items = _layer_items(workspace=workspace, layer=layer).defer("metadata")
    if filters.q:
        items = items.filter(Q(title__icontains=filters.q) | Q(content__icontains=filters.q))
    if filters.kind:
        items = items.filter(kind=filters.kind)
    if filters.type:
        items = items.filter(type=filters.type)
    page = Paginator(items, PAGE_SIZE).get_page(filters.page)
    rows: list[Item] = list(page.object_list)
    page.object_list = rows
    relations = item_relationships(workspace=workspace, item_ids=[item.pk for item in rows])
    for item in rows:
        item.relations = relations.get(item.pk, [])  # type: ignore[attr-defined]
    return page


def layer_item_types(*, layer: Layer) -> list[str]:
    """The types the type filter offers: every type a kind takes, and any other the layer's items have
    (a document's type is free); one query."""
    known = {t for types in ITEM_TYPES.values() for t in types if t}
    used = Item.objects.filter(layer=layer).exclude(type="").values_list("type", flat=True).distinct()
    return sorted(known | set(used))


def layer_figures(*, layer: Layer) -> dict[str, int]:
    counts = Item.objects.filter(layer=layer).aggregate(
        items=Count("pk"),
        pinned=Count("pk", filter=Q(pinned=True)),
        pending=Count("pk", filter=Q(embedding__isnull=True)),
    )
    counts["relationships"] = Relationship.objects.filter(Q(source__layer=layer) | Q(target__layer=layer)).count()
    return counts


def layer_summary_rows(*, layer: Layer) -> list[Summary]:
    """The three generic summaries, shortest first."""
    order = {"sentence": 0, "paragraph": 1, "detailed": 2}
    rows = list(Summary.objects.filter(layer=layer, personalized_for__isnull=True))
    return sorted(rows, key=lambda row: order.get(row.depth, 9))
