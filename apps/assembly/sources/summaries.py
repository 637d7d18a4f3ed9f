"""Layer summaries: those of the request's layer and its ancestors, similar to the query by the
search's vector; compiled from a message, those written after the first turn said after it are
left out (another branch of time)."""

from __future__ import annotations

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.retrieval import layer_summaries
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, left_out
from apps.engine import Candidate
from apps.engine.types import Reason
from apps.layers.selectors import first_turn_after


class SummarySource(CandidateSource):
    name = "layer summaries"
    past_deadline = False

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        params, deadline = request.params, request.deadline
        if params.kinds and "summary" not in params.kinds:
            return Found()
        if deadline.expired():
            deadline.skip("layer summaries")
            return Found()
        summaries = layer_summaries(
            workspace_id=request.workspace.pk,
            layer_ids=(*request.own, *request.ancestors),
            layer_names=request.layer_names,
            user=params.user,
            query_vector=gathered.searched.query_vector,
        )
        kept, written_later = _before(request, summaries)
        return Found(
            candidates=tuple(kept), left_out=tuple(left_out(c, reason=Reason.OTHER_BRANCH) for c in written_later)
        )

    def failed(self) -> str:
        return degraded(Degraded.CANDIDATES_FAILED, "layer summaries could not be read")


def _before(request: GatherRequest, summaries: list[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """Compiled from a message, the summaries written before the first turn said after it, and those
    written since: a summary rolls its layer's turns (and its children's summaries) up, so one written
    once a later turn was said tells what the agent at that message has not heard yet."""
    message_id, window_layers = request.params.message_id, request.window_layers
    if message_id is None or not summaries or not window_layers:
        return summaries, []
    later = first_turn_after(workspace_id=request.workspace.pk, layer_ids=window_layers, message_id=message_id)
    if later is None:
        return summaries, []
    return [c for c in summaries if c.created_at < later], [c for c in summaries if c.created_at >= later]
