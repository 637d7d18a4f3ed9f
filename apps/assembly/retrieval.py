"""Candidate gathering for assembly: hybrid retrieval (vector + keyword) plus pinned items.

Three statements at most: nearest neighbours, full-text matches, and one fetch of the rows for
the union of hits and pinned items. Embeddings are never loaded here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Q

from apps.assembly.engine import Candidate
from apps.layers.keyword_search import keyword_items
from apps.layers.models import Item
from apps.layers.vectors import nearest_items, vector_available


@dataclass
class Retrieved:
    candidates: list[Candidate]
    vector_used: bool
    warnings: list[str] = field(default_factory=list)


def retrieve(
    *,
    workspace_id: int,
    layer_ids: list[int],
    layer_names: dict[int, str],
    query: str,
    query_vector: np.ndarray | None,
    limit: int,
    kinds: list[str],
    types: list[str],
    since: object = None,
    until: object = None,
) -> Retrieved:
    filters = {"kinds": kinds or None, "types": types or None, "since": since, "until": until}
    warnings: list[str] = []
    vector_hits = []
    vector_used = query_vector is not None and vector_available()
    if query_vector is not None and not vector_used:
        warnings.append("vector search is unavailable on this database; results come from keyword search only")
    if vector_used:
        vector_hits = nearest_items(
            workspace_id=workspace_id, layer_ids=layer_ids, query_vector=query_vector, limit=limit, **filters
        )  # type: ignore[arg-type]
    keyword_hits = (
        keyword_items(workspace_id=workspace_id, layer_ids=layer_ids, query=query, limit=limit, **filters)
        if query
        else []
    )  # type: ignore[arg-type]
    vector_by_id = {h.item_id: (rank, h.similarity) for rank, h in enumerate(vector_hits, start=1)}
    keyword_by_id = {h.item_id: (rank, h.rank) for rank, h in enumerate(keyword_hits, start=1)}

    rows = Item.objects.filter(workspace_id=workspace_id, layer_id__in=layer_ids)
    if kinds:
        rows = rows.filter(kind__in=kinds)
    if types:
        rows = rows.filter(type__in=types)
    if since:
        rows = rows.filter(created_at__gte=since)
    if until:
        rows = rows.filter(created_at__lte=until)
    rows = rows.filter(Q(pk__in=[*vector_by_id, *keyword_by_id]) | Q(pinned=True)).values(
        "id",
        "kind",
        "type",
        "layer_id",
        "title",
        "content",
        "external_id",
        "created_at",
        "pinned",
        "importance",
        "confidence",
    )
    candidates = []
    for row in rows:
        v_rank, v_sim = vector_by_id.get(row["id"], (None, None))
        k_rank, k_score = keyword_by_id.get(row["id"], (None, None))
        candidates.append(
            Candidate(
                id=row["id"],
                kind=row["kind"],
                type=row["type"],
                layer_id=row["layer_id"],
                layer_name=layer_names.get(row["layer_id"], ""),
                content=row["content"],
                created_at=row["created_at"],
                title=row["title"],
                external_id=row["external_id"],
                pinned=row["pinned"],
                importance=row["importance"],
                confidence=row["confidence"],
                vector_similarity=v_sim,
                vector_rank=v_rank,
                keyword_score=k_score,
                keyword_rank=k_rank,
            )
        )
    return Retrieved(candidates=candidates, vector_used=vector_used, warnings=warnings)
