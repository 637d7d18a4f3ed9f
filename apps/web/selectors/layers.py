"""Reads for the layer page: the layer, its children, a page of its items, its summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import BooleanField, Count, ExpressionWrapper, Q

from apps.layers.models import Item, Layer, Relationship
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


def layer_items(*, workspace: Workspace, layer: Layer, filters: ItemFilter) -> Page[Any]:
    """A page of the layer's items, pinned first then newest; never loads vectors."""
    pending = ExpressionWrapper(Q(embedding__isnull=True), output_field=BooleanField())
    items = (
        Item.objects.filter(workspace=workspace, layer=layer)
        .defer("embedding", "search_vector", "metadata")
        .annotate(pending=pending)
        .order_by("-pinned", "-created_at", "-id")
    )
    if filters.q:
        items = items.filter(Q(title__icontains=filters.q) | Q(content__icontains=filters.q))
    if filters.kind:
        items = items.filter(kind=filters.kind)
    if filters.type:
        items = items.filter(type=filters.type)
    return Paginator(items, PAGE_SIZE).get_page(filters.page)


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
