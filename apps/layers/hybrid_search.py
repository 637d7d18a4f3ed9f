"""The one hybrid search: vector and keyword search over items, bounded by a deadline, fused.

Used by assembly's retrieval (which ranks the hits with the rest of its signals) and by the
history tool (which takes the fused order as it is). Each search runs with a statement timeout
of the time the deadline has left and is skipped, and named in `deadline.skipped`, when none is
left; keyword search always gets a floor, so a late request still finds something. A search that
fails (its table unavailable, a query vector of another dimension than the column) is left out and
named in `HybridHits.failed`: the caller answers from the other one and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from apps.core.deadline import Deadline
from apps.core.fusion import KEYWORD_WEIGHT, VECTOR_WEIGHT, fused_scores
from apps.core.isolation import isolated
from apps.layers.filters import ItemFilters
from apps.layers.keyword_search import KeywordHit, keyword_items
from apps.layers.statement_timeout import SearchTimedOut, statement_timeout
from apps.layers.vectors import VectorHit, centred_query, nearest_items, vector_available

# However late a request is, keyword search gets this long: without it there is nothing to return.
KEYWORD_FLOOR_MS = 100


class Stages(Protocol):
    """Something that times named stages (apps/assembly/timings.py StageTimes)."""

    def stage(self, name: str) -> AbstractContextManager[None]: ...


class _Untimed:
    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        yield


@dataclass(frozen=True)
class FusedHit:
    """One item found by either search, with both searches' ranks and scores and the fused score."""

    item_id: int
    score: float
    vector_rank: int | None
    similarity: float | None
    keyword_rank: int | None
    keyword_score: float | None


@dataclass(frozen=True)
class HybridHits:
    vector: list[VectorHit]  # best first
    keyword: list[KeywordHit]  # best first
    vector_used: bool  # a vector search ran (a query vector, pgvector, time left)
    failed: tuple[str, ...] = ()  # the searches that failed ("vector search", "keyword search")
    # The query's vector (None: there was none), computed or given, centred on the scope as the vector
    # search compared it (vectors.centred_query): what the caller compares summaries with.
    query_vector: np.ndarray | None = None

    def fused(self, *, vector: float = VECTOR_WEIGHT, keyword: float = KEYWORD_WEIGHT) -> list[FusedHit]:
        """Every hit once, best fused score first (core/fusion.py); ties keep the better search rank."""
        v = {h.item_id: (rank, h.similarity) for rank, h in enumerate(self.vector, start=1)}
        k = {h.item_id: (rank, h.rank) for rank, h in enumerate(self.keyword, start=1)}
        ids = list(dict.fromkeys([*v, *k]))
        scores = fused_scores(
            ((i, v[i][1] if i in v else None, k[i][1] if i in k else None) for i in ids), vector=vector, keyword=keyword
        )
        hits = [
            FusedHit(
                item_id=i,
                score=scores[i],
                vector_rank=v[i][0] if i in v else None,
                similarity=v[i][1] if i in v else None,
                keyword_rank=k[i][0] if i in k else None,
                keyword_score=k[i][1] if i in k else None,
            )
            for i in ids
        ]
        worst = len(ids) + 1
        hits.sort(key=lambda h: (-h.score, min(h.vector_rank or worst, h.keyword_rank or worst)))
        return hits


def hybrid_search(
    *,
    filters: ItemFilters,
    query: str,
    query_vector: np.ndarray | None | Callable[[], np.ndarray | None],
    limit: int,
    deadline: Deadline | None = None,
    timings: Stages | None = None,
) -> HybridHits:
    """The `limit` nearest items to `query_vector` and the `limit` best keyword matches of `query`.

    No vector search without a query vector or pgvector; no keyword search without query text.
    A callable `query_vector` is a vector still being computed (a query embedding in a thread):
    the keyword search runs first, then the call waits for the vector (None: no vector search).
    """
    deadline = deadline or Deadline(limit_ms=None)
    clock: Stages = timings or _Untimed()
    pending = callable(query_vector)
    failed: list[str] = []
    keyword_hits = _keyword(filters, query, limit, deadline, clock, failed) if pending else []
    vector = query_vector() if callable(query_vector) else query_vector
    vector_used = vector is not None and vector_available()
    vector_hits: list[VectorHit] = []
    if vector_used and deadline.expired():
        deadline.skip("vector search")
        vector_used = False
    elif vector_used and vector is not None:  # vector_used implies it; the check narrows the type
        asked = vector
        found, error = isolated(lambda: _vector(filters, asked, limit, deadline, clock), what="vector search")
        if found is None:
            vector_used = False
            if error is not None:
                failed.append("vector search")
        else:
            vector_hits, vector = found
    if not pending:
        keyword_hits = _keyword(filters, query, limit, deadline, clock, failed)
    return HybridHits(
        vector=vector_hits, keyword=keyword_hits, vector_used=vector_used, failed=tuple(failed), query_vector=vector
    )


def _vector(
    filters: ItemFilters, vector: np.ndarray, limit: int, deadline: Deadline, clock: Stages
) -> tuple[list[VectorHit], np.ndarray] | None:
    """The nearest items to the query centred on the scope (vectors.centred_query), and that centred
    vector; None when the deadline's statement timeout cut the search (named skipped)."""
    try:
        with clock.stage("vector_search"), statement_timeout(deadline.remaining_ms()):
            centred = centred_query(filters=filters, query_vector=vector)
            return nearest_items(filters=filters, query_vector=centred, limit=limit), centred
    except SearchTimedOut:
        deadline.skip("vector search")
        return None


def _keyword(
    filters: ItemFilters, query: str, limit: int, deadline: Deadline, clock: Stages, failed: list[str]
) -> list[KeywordHit]:
    if not query:
        return []
    left = deadline.remaining_ms()

    def search() -> list[KeywordHit]:
        try:
            with (
                clock.stage("keyword_search"),
                statement_timeout(None if left is None else max(left, KEYWORD_FLOOR_MS)),
            ):
                return keyword_items(filters=filters, query=query, limit=limit)
        except SearchTimedOut:
            deadline.skip("keyword search")
            return []

    found, error = isolated(search, what="keyword search")
    if error is not None:
        failed.append("keyword search")
    return found or []
