"""Related items: those `expand_related` hops along relationships from the search hits gathered so
far, each inheriting half its neighbour's relevance per hop (retrieval.related_items)."""

from __future__ import annotations

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.retrieval import related_items
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest
from apps.engine.rank import fused_relevance


class RelatedSource(CandidateSource):
    name = "related items"
    past_deadline = False

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        params, deadline = request.params, request.deadline
        if not params.expand_related:
            return Found()
        if deadline.expired():
            deadline.skip("related items")
            return Found()
        weights = request.resolved.weights
        seeds = {c.id: fused_relevance(c, weights) for c in gathered.candidates if c.vector_rank or c.keyword_rank}
        skipped: list[str] = []
        related = related_items(
            seeds=seeds,
            filters=request.filters,
            layer_names=request.layer_names,
            depth=params.expand_related,
            skipped=skipped,
            deadline=deadline,
        )
        return Found(candidates=tuple(related), skipped=tuple(skipped))

    def failed(self) -> str:
        return degraded(Degraded.CANDIDATES_FAILED, "related items could not be read")
