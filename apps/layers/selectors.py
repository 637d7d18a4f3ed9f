"""Reads for layers and items, always scoped to one workspace."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from apps.core import background, embeddings
from apps.core.errors import NotFound
from apps.layers.embedding_rate import rate_recent
from apps.layers.models import Item, Layer, Relationship
from apps.layers.vectors import vector_available
from apps.workspaces.models import Workspace


def layer_get(*, workspace: Workspace, layer_id: int) -> Layer:
    """The workspace's layer, or NotFound (also for another workspace's id)."""
    layer = Layer.objects.filter(workspace=workspace, pk=layer_id).first()
    if layer is None:
        raise NotFound(f"layer {layer_id} not found", code="layer_not_found")
    return layer


def layer_get_by_external_id(*, workspace: Workspace, external_id: str, kind: str | None = None) -> Layer:
    layers = Layer.objects.filter(workspace=workspace, external_id=external_id)
    if kind:
        layers = layers.filter(kind=kind)
    found = list(layers[:2])
    if not found:
        raise NotFound(f"layer with external_id {external_id!r} not found", code="layer_not_found")
    if len(found) > 1:
        from apps.core.errors import InvalidInput

        raise InvalidInput(
            f"several layers have external_id {external_id!r}; give the layer id",
            code="ambiguous_external_id",
        )
    return found[0]


def layers_list(
    *, workspace: Workspace, kind: str | None = None, external_id: str | None = None, parent_id: int | None = None
) -> QuerySet[Layer]:
    layers = Layer.objects.filter(workspace=workspace)
    if kind:
        layers = layers.filter(kind=kind)
    if external_id:
        layers = layers.filter(external_id=external_id)
    if parent_id is not None:
        layers = layers.filter(parent_id=parent_id)
    return layers.order_by("id")


LayerTree = dict[int, tuple[int | None, str, str]]


def layer_tree(*, workspace_id: int) -> LayerTree:
    """Every layer of the workspace as id → (parent id, kind, name), in one query."""
    rows = Layer.objects.filter(workspace_id=workspace_id).values_list("id", "parent_id", "kind", "name")
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def layer_scope(
    *, tree: dict[int, tuple[int | None, str, str]], layer_id: int
) -> tuple[list[int], list[int], list[int]]:
    """(ancestors nearest first, the layer itself, descendants) of a layer, from `layer_tree`."""
    ancestors: list[int] = []
    parent = tree[layer_id][0]
    while parent is not None and parent in tree:
        ancestors.append(parent)
        parent = tree[parent][0]
    children: dict[int, list[int]] = {}
    for node, (parent_id, _, _) in tree.items():
        if parent_id is not None:
            children.setdefault(parent_id, []).append(node)
    descendants: list[int] = []
    stack = list(children.get(layer_id, []))
    while stack:
        node = stack.pop()
        descendants.append(node)
        stack.extend(children.get(node, []))
    return ancestors, [layer_id], descendants


def item_get(*, workspace: Workspace, item_id: int) -> Item:
    item = Item.objects.filter(workspace=workspace, pk=item_id).defer("embedding").select_related("layer").first()
    if item is None:
        raise NotFound(f"item {item_id} not found", code="item_not_found")
    return item


def relationship_get(*, workspace: Workspace, relationship_id: int) -> Relationship:
    found = Relationship.objects.filter(workspace=workspace, pk=relationship_id).first()
    if found is None:
        raise NotFound(f"relationship {relationship_id} not found", code="relationship_not_found")
    return found


def relationships_list(
    *, workspace: Workspace, item_id: int | None = None, kind: str | None = None
) -> QuerySet[Relationship]:
    """The workspace's edges, newest first; `item_id`: those from or to that item."""
    edges = Relationship.objects.filter(workspace=workspace)
    if item_id is not None:
        edges = edges.filter(Q(source_id=item_id) | Q(target_id=item_id))
    if kind is not None:
        edges = edges.filter(kind=kind)
    return edges.order_by("-created_at", "-id")


def items_list(
    *, workspace: Workspace, layer_id: int | None = None, kind: str | None = None, type: str | None = None
) -> QuerySet[Item]:
    items = Item.objects.filter(workspace=workspace).defer("embedding", "search_vector")
    if layer_id is not None:
        items = items.filter(layer_id=layer_id)
    if kind:
        items = items.filter(kind=kind)
    if type:
        items = items.filter(type=type)
    return items.order_by("id")


def items_pending_embedding_count(*, workspace: Workspace) -> int:
    return Item.objects.filter(workspace=workspace, embedding__isnull=True).count()


def workspace_items_status(*, workspace: Workspace) -> dict[str, Any]:
    """Layers' part of the workspace status (`GET /api/v1/status/`, answering `workspaces.signals.status_read`):
    counts, embedding backlog, background queue and active providers.

    A client that bulk-loads polls this until `items_pending_embedding` is 0;
    `embedding_eta_seconds` is that backlog over the embedder's recent rate (null before it has one).
    """
    provider = embeddings.get_provider()
    pending = Item.objects.filter(workspace=workspace, embedding__isnull=True).count()
    rate = rate_recent()
    return {
        "layers": Layer.objects.filter(workspace=workspace).count(),
        "items": Item.objects.filter(workspace=workspace).count(),
        "items_pending_embedding": pending,
        "embedding_items_per_s": None if rate is None else round(rate, 2),
        "embedding_eta_seconds": 0.0 if not pending else None if rate is None else round(pending / rate, 1),
        "background": {"mode": settings.BACKGROUND_MODE, "queue_depth": background.queue_depth()},
        "providers": {
            "embedding": {"name": provider.name, "model": provider.model, "dimensions": provider.dimensions},
            "vector_search": "pgvector" if vector_available() else None,
            "keyword_search": "postgresql-fts",
            "cache": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
            "tokenizer": "tiktoken",
            "default_model": settings.DEFAULT_MODEL,
        },
    }
