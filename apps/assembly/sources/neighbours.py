"""The turns next to the top message hits, the turn a hit answers and the replies to it."""

from __future__ import annotations

from apps.assembly.adjacency import neighbour_seed_rank
from apps.assembly.degraded import Degraded, degraded
from apps.assembly.retrieval import neighbour_turns
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest
from apps.engine.types import Source

# One deadline stage for the neighbours and the window: past the deadline after the search, neither runs.
LATE = "neighbouring turns and the conversation window"


class NeighbourSource(CandidateSource):
    name = "neighbouring turns"
    past_deadline = False

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        if request.deadline.expired():
            request.deadline.skip(LATE)
            return Found()
        skipped: list[str] = []
        known = {c.id: c for c in gathered.candidates if c.source == Source.ITEM}
        found = neighbour_turns(
            known,
            gathered.searched.parent_of,
            request.filters,
            request.layer_names,
            neighbour_seed_rank(request.resolved.budget),
            skipped,
        )
        return Found(candidates=tuple(found), skipped=tuple(skipped))

    def failed(self) -> str:
        return degraded(Degraded.CANDIDATES_FAILED, "the turns next to the hits could not be read")
