"""Reads for layers and items, always scoped to one workspace."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Count, ExpressionWrapper, Min, Q, QuerySet, Subquery
from django.db.models.functions import Substr

from apps.core import background, embeddings
from apps.core.errors import NotFound
from apps.layers.embedder import TOKENS_ESTIMATE_SQL
from apps.layers.embedding_rate import RecentRate, rate_recent
from apps.layers.embedding_space import space_state
from apps.layers.errors import (
    AMBIGUOUS_EXTERNAL_ID,
    ITEM_NOT_FOUND,
    LAYER_NOT_FOUND,
    PROPOSAL_NOT_FOUND,
    RELATIONSHIP_NOT_FOUND,
)
from apps.layers.models import Item, ItemKind, Layer, LayerKind, Relationship, SupersessionProposal
from apps.layers.vectors import vector_available
from apps.workspaces.models import Workspace


def layer_get(*, workspace: Workspace, layer_id: int, with_parent: bool = False) -> Layer:
    """The workspace's layer (`with_parent`: its parent read in the same query), or NotFound (also for
    another workspace's id)."""
    layers = Layer.objects.filter(workspace=workspace, pk=layer_id)
    layer = (layers.select_related("parent") if with_parent else layers).first()
    if layer is None:
        raise NotFound(f"layer {layer_id} not found", code=LAYER_NOT_FOUND)
    return layer


def layer_find(*, layer_id: int) -> Layer | None:
    """The layer of this id, in any workspace (None: gone): for background work, which takes ids."""
    return Layer.objects.filter(pk=layer_id).first()


def layer_has_items(*, layer_id: int) -> bool:
    return Item.objects.filter(layer_id=layer_id).exists()


def layer_get_by_external_id(*, workspace: Workspace, external_id: str, kind: str | None = None) -> Layer:
    layers = Layer.objects.filter(workspace=workspace, external_id=external_id)
    if kind:
        layers = layers.filter(kind=kind)
    found = list(layers[:2])
    if not found:
        raise NotFound(f"layer with external_id {external_id!r} not found", code=LAYER_NOT_FOUND)
    if len(found) > 1:
        from apps.core.errors import InvalidInput

        raise InvalidInput(
            f"several layers have external_id {external_id!r}; give the layer id",
            code=AMBIGUOUS_EXTERNAL_ID,
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


def message_ids_by_external_id(*, layer: Layer, external_ids: Iterable[str]) -> dict[str, int]:
    """The ids of the layer's messages that carry these external ids (the proxy's stored turns)."""
    rows = Item.objects.filter(layer=layer, kind=ItemKind.MESSAGE, external_id__in=list(external_ids))
    return {external_id: pk for external_id, pk in rows.values_list("external_id", "pk") if external_id}


def item_external_ids_known(*, workspace_id: int, external_ids: Iterable[str]) -> set[str]:
    """Which of these external ids some item of the workspace carries (in any layer)."""
    wanted = list(set(external_ids))
    rows = Item.objects.filter(workspace_id=workspace_id, external_id__in=wanted)
    return set(rows.values_list("external_id", flat=True).distinct())  # type: ignore[arg-type]


def item_ids_known(*, workspace_id: int, item_ids: Iterable[int]) -> set[int]:
    """Which of these ids are items of the workspace (one query)."""
    return set(Item.objects.filter(workspace_id=workspace_id, pk__in=list(set(item_ids))).values_list("pk", flat=True))


def item_external_ids(*, workspace_id: int, item_ids: Iterable[int]) -> dict[int, str]:
    """The external ids of these items of the workspace, by item id (items without one are left out)."""
    rows = Item.objects.filter(workspace_id=workspace_id, pk__in=list(set(item_ids)), external_id__isnull=False)
    return dict(rows.values_list("pk", "external_id"))  # type: ignore[arg-type]


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


def layer_kinds(*, layer_ids: Iterable[int]) -> dict[int, str]:
    """The kind of each of these layers that still exists, by id (one query)."""
    return dict(Layer.objects.filter(pk__in=list(layer_ids)).values_list("pk", "kind"))


def layers_with_item_counts(*, workspace: Workspace) -> list[Layer]:
    """The workspace's layers by id, each with `item_count` and `pending` (items waiting for an
    embedding), in one grouped query."""
    return list(
        Layer.objects.filter(workspace=workspace)
        .annotate(
            item_count=Count("items", distinct=True),
            pending=Count("items", filter=Q(items__embedding__isnull=True), distinct=True),
        )
        .order_by("id")
    )


def layer_item_counts(*, layer: Layer) -> dict[str, Any]:
    """The layer's items: total, by kind, waiting for an embedding, pinned; and the relationships with
    an end among them (two queries)."""
    by_kind = list(
        Item.objects.filter(layer=layer)
        .values("kind")
        .annotate(
            n=Count("pk"),
            pinned=Count("pk", filter=Q(pinned=True)),
            pending=Count("pk", filter=Q(embedding__isnull=True)),
        )
        .order_by("kind")
    )
    return {
        "total": sum(row["n"] for row in by_kind),
        "by_kind": {row["kind"]: row["n"] for row in by_kind},
        "pending_embedding": sum(row["pending"] for row in by_kind),
        "pinned": sum(row["pinned"] for row in by_kind),
        "relationships": Relationship.objects.filter(Q(source__layer=layer) | Q(target__layer=layer)).count(),
    }


def layer_ancestors(*, layer: Layer) -> list[Layer]:
    """Root first, the layer's parent last (at most five queries: the hierarchy is six deep)."""
    chain: list[Layer] = []
    current = layer.parent
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain[::-1]


def layer_children(*, layer: Layer) -> list[Layer]:
    """The layer's children by kind and name, each with its `item_count` (one query)."""
    return list(layer.children.annotate(item_count=Count("items")).order_by("kind", "name"))


def layer_names(*, workspace_id: int, layer_ids: Iterable[int]) -> dict[int, str]:
    """The name of each of these layers of the workspace that still exists, by id (one query)."""
    return dict(Layer.objects.filter(workspace_id=workspace_id, pk__in=list(layer_ids)).values_list("id", "name"))


def conversation_layers(*, workspace: Workspace, limit: int) -> list[Layer]:
    """The workspace's sessions and multi-session conversations, newest first, each with its number of
    `messages` (one query)."""
    return list(
        Layer.objects.filter(workspace=workspace, kind__in=[LayerKind.MULTI_SESSION, LayerKind.SESSION])
        .annotate(messages=Count("items", filter=Q(items__kind=ItemKind.MESSAGE)))
        .order_by("-id")[:limit]
    )


def named_conversations(*, workspace: Workspace) -> list[tuple[str | None, str, str]]:
    """(external id, kind, name) of the workspace's sessions and conversations that have an external id,
    by name: what a request names as its `conversation_id`."""
    return list(
        Layer.objects.filter(
            workspace=workspace, kind__in=[LayerKind.SESSION, LayerKind.MULTI_SESSION], external_id__isnull=False
        )
        .order_by("name")
        .values_list("external_id", "kind", "name")
    )


def item_texts(*, workspace_id: int, item_ids: Iterable[int]) -> dict[int, tuple[str, str, str]]:
    """(kind, title, content) of each of these items of the workspace that still exists, by id (one query)."""
    rows = Item.objects.filter(workspace_id=workspace_id, pk__in=list(item_ids)).values_list(
        "id", "kind", "title", "content"
    )
    return {item_id: (kind, title, content) for item_id, kind, title, content in rows}


def messages_newest(*, workspace_id: int, layer_ids: Iterable[int], limit: int) -> tuple[int, list[dict[str, Any]]]:
    """How many messages these layers hold, and the newest `limit` of them, newest first, with their
    links, text and marks (two queries)."""
    messages = Item.objects.filter(workspace_id=workspace_id, layer_id__in=list(layer_ids), kind=ItemKind.MESSAGE)
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in messages.order_by("-created_at", "-id").values(
            "id", "parent_id", "role", "type", "title", "content", "created_at", "importance", "pinned", "metadata"
        )[:limit]
    ]
    return messages.count(), rows


def first_turn_after(*, workspace_id: int, layer_ids: Iterable[int], message_id: int) -> datetime | None:
    """When the first turn of these layers said after this message was said, or None (one query)."""
    said = Item.objects.filter(workspace_id=workspace_id, pk=message_id).values("created_at")[:1]
    later = Item.objects.filter(
        workspace_id=workspace_id,
        layer_id__in=list(layer_ids),
        kind=ItemKind.MESSAGE,
        created_at__gt=Subquery(said),
    )
    first: datetime | None = later.aggregate(first=Min("created_at"))["first"]
    return first


def layer_items_shown(
    *, workspace: Workspace, layer: Layer, q: str = "", kind: str = "", type: str = ""
) -> QuerySet[Item]:
    """The layer's items as a list shows them, pinned first then newest, each with `pending` (waiting for
    an embedding), never their vectors; `q` in the title or content, of `kind` and `type`."""
    pending = ExpressionWrapper(Q(embedding__isnull=True), output_field=BooleanField())
    items = (
        Item.objects.filter(workspace=workspace, layer=layer)
        .defer("embedding", "search_vector")
        .annotate(pending=pending)
        .order_by("-pinned", "-created_at", "-id")
    )
    if q:
        items = items.filter(Q(title__icontains=q) | Q(content__icontains=q))
    if kind:
        items = items.filter(kind=kind)
    if type:
        items = items.filter(type=type)
    return items


def layer_item_types(*, layer: Layer) -> set[str]:
    """The types the layer's items have (one query)."""
    return set(Item.objects.filter(layer=layer).exclude(type="").values_list("type", flat=True).distinct())


def relationships_of_items(*, workspace: Workspace, item_ids: Iterable[int]) -> list[dict[str, Any]]:
    """The workspace's relationships with an end among these items, newest first, each with both ends'
    title, excerpt (EXCERPT_CHARS + 1 characters), layer id and layer name (one query)."""
    wanted = set(item_ids)
    if not wanted:
        return []
    return list(
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


EXCERPT_CHARS = 160  # the excerpts `relationships_of_items` cuts one character past, for an ellipsis


def item_get(*, workspace: Workspace, item_id: int) -> Item:
    item = Item.objects.filter(workspace=workspace, pk=item_id).defer("embedding").select_related("layer").first()
    if item is None:
        raise NotFound(f"item {item_id} not found", code=ITEM_NOT_FOUND)
    return item


def relationship_get(*, workspace: Workspace, relationship_id: int) -> Relationship:
    found = Relationship.objects.filter(workspace=workspace, pk=relationship_id).first()
    if found is None:
        raise NotFound(f"relationship {relationship_id} not found", code=RELATIONSHIP_NOT_FOUND)
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
    `embedding_eta_seconds` is when that backlog is done (`embedding_eta`; null while the embedder
    has no recent rate: none yet, or stopped).
    """
    provider = embeddings.get_provider()
    pending = Item.objects.filter(workspace=workspace, embedding__isnull=True).count()
    rate = rate_recent()
    return {
        "layers": Layer.objects.filter(workspace=workspace).count(),
        "items": Item.objects.filter(workspace=workspace).count(),
        "items_pending_embedding": pending,
        "embedding_items_per_s": None if rate is None else round(rate.items_per_s, 2),
        "embedding_eta_seconds": 0.0 if not pending else embedding_eta(workspace_id=workspace.pk, rate=rate),
        "embedding_model_change": _model_change(),
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


def _model_change() -> dict[str, Any] | None:
    """The embedding model change being re-embedded, or None (apps/layers/embedding_space.py)."""
    state = space_state()
    if not state.reembedding:
        return None
    return {"from": state.previous_label, "to": state.label, "since": state.changed_at}


# Per workspace with items waiting: how many, and the mean estimated cost of its oldest 500.
_BACKLOG_SQL = """
WITH pending AS (SELECT workspace_id, count(*) AS n FROM layers_item WHERE embedding IS NULL GROUP BY workspace_id)
SELECT p.workspace_id, p.n, s.mean FROM pending p CROSS JOIN LATERAL (
    SELECT avg({estimate}) AS mean FROM (
        SELECT i.title, i.content FROM layers_item i
        WHERE i.workspace_id = p.workspace_id AND i.embedding IS NULL ORDER BY i.id LIMIT 500
    ) i
) s
"""


def embedding_eta(*, workspace_id: int, rate: RecentRate | None) -> float | None:
    """Seconds until the workspace's backlog is embedded, counted in model tokens (estimated as the
    embedder plans its batches), at the deployment's recent rate, with every workspace that waits
    taking its fair share: a batch serves workspaces by deficit round-robin in tokens, so while
    another workspace with B tokens waits, the own backlog T finishes after min(B, T) of its tokens
    too. A CJK backlog counts its real cost, not its number of items (an ETA of items/s said 0.1 s
    while one CJK batch held an item back 8 minutes)."""
    if rate is None or rate.tokens_per_s <= 0:
        return None
    params = {"cap": settings.EMBEDDING_MAX_INPUT_CHARS, "max_tokens": embeddings.get_provider().max_tokens}
    with connection.cursor() as cursor:
        cursor.execute(_BACKLOG_SQL.format(estimate=TOKENS_ESTIMATE_SQL), params)
        backlog = {ws: n * float(mean or 0) for ws, n, mean in cursor.fetchall()}
    own = backlog.get(workspace_id, 0.0)
    shared = sum(min(tokens, own) for tokens in backlog.values())
    return round(shared / rate.tokens_per_s, 1)


def proposals_list(
    *, workspace: Workspace, state: str | None = None, layer_id: int | None = None
) -> QuerySet[SupersessionProposal]:
    """The workspace's supersession proposals, newest first, with both items' text and the layer at hand."""
    proposals = SupersessionProposal.objects.filter(workspace=workspace).select_related("old", "new", "layer")
    if state:
        proposals = proposals.filter(state=state)
    if layer_id is not None:
        proposals = proposals.filter(layer_id=layer_id)
    return proposals.defer("old__embedding", "old__search_vector", "new__embedding", "new__search_vector").order_by(
        "-created_at", "-id"
    )


def proposal_get(*, workspace: Workspace, proposal_id: int) -> SupersessionProposal:
    found = SupersessionProposal.objects.filter(workspace=workspace, pk=proposal_id).first()
    if found is None:
        raise NotFound(f"proposal {proposal_id} not found", code=PROPOSAL_NOT_FOUND)
    return found
