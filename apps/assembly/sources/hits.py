"""The search hits and pinned items: the first source, whose floor, query vector and hit parents
the sources after it read (`Gathered.searched`)."""

from __future__ import annotations

from django.conf import settings

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.retrieval import search_hits
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, Searched


def candidate_limit(token_budget: int) -> int:
    """How many hits each search fetches for a context of `token_budget` tokens: RETRIEVAL_CANDIDATES
    per 1,000 tokens, within [RETRIEVAL_CANDIDATES, RETRIEVAL_CANDIDATES_MAX]. A small context is
    filled from the top of the ranking; a big one reaches deeper, where at 50 hits most of what a
    4,000-token context missed on the development set was no candidate at all."""
    base = settings.RETRIEVAL_CANDIDATES
    return max(base, min(settings.RETRIEVAL_CANDIDATES_MAX, base * token_budget // 1000))


class HitSource(CandidateSource):
    name = "search hits and pinned items"
    past_deadline = False  # each search runs with a statement timeout of the time left

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        hits = search_hits(
            filters=request.filters,
            layer_names=request.layer_names,
            query=request.params.query,
            query_vector=request.query_vector,
            limit=candidate_limit(request.resolved.budget),
            deadline=request.deadline,
            timings=request.timings,
        )
        return Found(
            candidates=tuple(hits.candidates),
            warnings=hits.warnings,
            skipped=hits.skipped,
            searched=Searched(floor=hits.floor, query_vector=hits.query_vector, parent_of=hits.parent_of),
        )

    def failed(self) -> str:
        return degraded(Degraded.CANDIDATES_FAILED, "the search hits and pinned items could not be read")
