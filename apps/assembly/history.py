"""The history tool: an LLM asks for past messages by meaning, by task or by id.

"all messages about authentication" → `query` (the shared hybrid search over messages, fused by score, with a deadline);
"what did we discuss about task X" → `task` (the task's messages in order, led by its community
summary); "nodes [a, b, c]" → `ids`. Filters combine (AND). The answer is rendered by the
engine's own formatter (json/markdown/text), so it reads like assembled context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.spans import history_annotate, history_started
from apps.assembly.timings import StageTimes
from apps.conversations import access
from apps.conversations.models import Community, CommunityKind
from apps.conversations.selectors import MESSAGE_FIELDS
from apps.core import embeddings, telemetry, tokenizer
from apps.core.deadline import Deadline
from apps.core.errors import InvalidInput, NotFound
from apps.core.fair_share import workspace_slot
from apps.core.field_errors import INVALID_FORMAT, INVALID_QUERY
from apps.core.fusion import KEYWORD_WEIGHT, VECTOR_WEIGHT
from apps.core.replicas import replica_reads
from apps.engine.candidates import community_candidate, item_candidate, search_origin
from apps.engine.format import FORMATS, render, render_piece
from apps.layers.embedding_space import reembedding_note
from apps.layers.errors import ITEM_NOT_FOUND
from apps.layers.filters import ItemFilters
from apps.layers.hybrid_search import FusedHit, hybrid_search
from apps.layers.models import Item, ItemKind, Layer
from apps.layers.selectors import layer_scope, layer_tree
from apps.layers.vectors import vector_available
from apps.workspaces.models import Workspace

MAX_IDS = 200
MAX_LIMIT = 200
# Vector hits this far below the best one are about something else (e5 scores everything ≥ 0.75).
SIMILARITY_MARGIN = 0.04


@dataclass(frozen=True)
class HistoryQuery:
    layer: Layer | None = None
    query: str = ""
    task: str = ""
    ids: tuple[int, ...] = ()
    limit: int = 50
    format: str = "markdown"
    model: str | None = None


def _search(q: HistoryQuery, filters: ItemFilters) -> tuple[dict[int, FusedHit], list[str]]:
    """Message id → its hit for the query: the shared hybrid search (apps/layers/hybrid_search.py),
    fused by score like assembly's, within HISTORY_TIMEOUT_MS; vector-only hits this far below the
    best similarity are dropped (SIMILARITY_MARGIN). With the search's warnings, in the order they arose."""
    warnings: list[str] = []
    deadline = Deadline(limit_ms=settings.HISTORY_TIMEOUT_MS or None)  # the query embedding counts too
    timings = StageTimes()  # not recorded: its stages are the search span's children when tracing
    vector = None
    if vector_available():
        try:
            with timings.stage("embedding"):
                vector = np.asarray(embeddings.embed_query(q.query)[0])
        except embeddings.EmbeddingError as exc:
            warnings.append(f"query embedding failed ({exc.message}); results come from keyword search only")
        if embeddings.query_clipped(q.query):
            warnings.append(embeddings.QUERY_CLIPPED)
        if vector is not None and (note := reembedding_note(workspace_id=filters.workspace_id)):
            warnings.append(note)
    found = hybrid_search(
        filters=filters, query=q.query, query_vector=vector, limit=q.limit, deadline=deadline, timings=timings
    )
    for search in found.failed:
        warnings.append(degraded(Degraded.SEARCH_FAILED, f"the {search} failed; these messages come from the rest"))
    if deadline.partial:
        warnings.append(
            f"the search passed its {settings.HISTORY_TIMEOUT_MS} ms deadline: {', '.join(deadline.skipped)} "
            "skipped, so these messages may be incomplete"
        )
    floor = found.vector[0].similarity - SIMILARITY_MARGIN if found.vector else 0.0
    hits = [h for h in found.fused() if h.keyword_rank is not None or (h.similarity or 0.0) >= floor]
    return {h.item_id: h for h in hits[: q.limit]}, warnings


def _scope(workspace: Workspace, layer: Layer | None) -> tuple[int, ...]:
    tree = layer_tree(workspace_id=workspace.pk)
    if layer is None:
        return tuple(tree)
    _, own, descendants = layer_scope(tree=tree, layer_id=layer.pk)
    return (*own, *descendants)


def history_query(*, workspace: Workspace, q: HistoryQuery) -> dict[str, Any]:
    """Messages answering `q`, oldest first, with the context string in the requested format, in one of
    the process's slots for the workspace (its fair share: apps/core/fair_share.py); a `search_memory`
    span when tracing (apps/assembly/spans.py)."""
    if not telemetry.tracing():
        return _history(workspace, q)
    name, attributes = history_started(workspace=workspace, layer_id=q.layer.pk if q.layer else None)
    with telemetry.operation(name, attributes) as span:
        answer = _history(workspace, q)
        if span is not None:
            history_annotate(span, workspace=workspace, query=q.query, answer=answer)
        return answer


def _history(workspace: Workspace, q: HistoryQuery) -> dict[str, Any]:
    if not (q.query.strip() or q.task or q.ids):
        raise InvalidInput("give query, task or ids", code=INVALID_QUERY)
    if q.format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", code=INVALID_FORMAT)
    with workspace_slot(workspace_id=workspace.pk, what="history search"), replica_reads(workspace_id=workspace.pk):
        return _history_search(workspace, q)


def _history_search(workspace: Workspace, q: HistoryQuery) -> dict[str, Any]:
    layer_ids = _scope(workspace, q.layer)
    filters = ItemFilters(workspace_id=workspace.pk, layer_ids=layer_ids, kinds=(ItemKind.MESSAGE,))
    items = Item.objects.filter(filters.q())
    hits: dict[int, FusedHit] = {}
    warnings: list[str] = []  # the search's: the answer's only ones
    if q.ids:
        found = set(
            Item.objects.filter(workspace=workspace, kind=ItemKind.MESSAGE, pk__in=q.ids).values_list("pk", flat=True)
        )
        missing = sorted(set(q.ids) - found)
        if missing:
            raise NotFound(f"message {missing[0]} not found", code=ITEM_NOT_FOUND, details={"ids": missing})
        items = Item.objects.filter(workspace=workspace, pk__in=q.ids)
    if q.task:
        items = items.filter(task_ids__contains=[q.task])
    if q.query.strip():
        hits, warnings = _search(q, filters)
        items = items.filter(pk__in=list(hits))
    rows = list(items.order_by("created_at", "id").values(*MESSAGE_FIELDS, "metadata")[: q.limit])
    communities = _task_communities(workspace, layer_ids, q.task) if q.task else []
    return _respond(workspace, q, rows, hits, communities, warnings)


def _task_communities(workspace: Workspace, layer_ids: tuple[int, ...], task: str) -> list[Community]:
    return list(
        Community.objects.filter(workspace=workspace, layer_id__in=layer_ids, kind=CommunityKind.TASK, key=task)
        .select_related("layer")
        .order_by("first_at", "id")
    )


def _respond(
    workspace: Workspace,
    q: HistoryQuery,
    rows: list[dict[str, Any]],
    hits: dict[int, FusedHit],
    communities: list[Community],
    warnings: list[str],
) -> dict[str, Any]:
    names = dict(
        Layer.objects.filter(workspace=workspace, pk__in={r["layer_id"] for r in rows}).values_list("id", "name")
    )
    pieces = [
        render_piece(
            community_candidate(c, layer_name=c.layer.name),
            c.summary,
            fmt=q.format,
            score=1.0,
            truncated=False,
        )
        for c in communities
    ]
    messages = []
    for r in rows:
        hit = hits.get(r["id"])
        # Relevance in [0, 1]: the fused score over the most both searches can give.
        score = 1.0 if hit is None else hit.score / (VECTOR_WEIGHT + KEYWORD_WEIGHT)
        candidate = item_candidate(
            {**r, "kind": ItemKind.MESSAGE},
            layer_name=names.get(r["layer_id"], ""),
            origin="conversation"
            if hit is None
            else search_origin(vector_rank=hit.vector_rank, keyword_rank=hit.keyword_rank),
        )
        pieces.append(render_piece(candidate, r["content"], fmt=q.format, score=score, truncated=False))
        messages.append(
            {
                "id": r["id"],
                "layer": r["layer_id"],
                "role": r["role"],
                "title": r["title"],
                "content": r["content"],
                "created_at": r["created_at"],
                "parent": r["parent_id"],
                "task_ids": r["task_ids"],
                "importance": r["importance"],
                "relevance": round(score, 4) if hits else None,
            }
        )
    context = render(pieces, fmt=q.format)
    encoding = tokenizer.encoding_for_model(q.model or settings.DEFAULT_MODEL)
    access.note_served(m["id"] for m in messages)
    return {
        "context": context,
        "format": q.format,
        "total_tokens": tokenizer.count_tokens(context, encoding.encoding),
        "model": q.model or settings.DEFAULT_MODEL,
        "messages": messages,
        "communities": [
            {"id": c.pk, "kind": c.kind, "key": c.key, "title": c.title, "summary": c.summary, "layer": c.layer_id}
            for c in communities
        ],
        "warnings": warnings,
    }
