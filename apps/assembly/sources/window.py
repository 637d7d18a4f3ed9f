"""The conversation window: the turns of the conversation's branch back from the newest turn (or
the message compiled from), each with its distance; the turns of its other branches are left out,
and with a named conversation, the messages outside it."""

from __future__ import annotations

from dataclasses import dataclass

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.retrieval import add_window, off_branch
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, left_out
from apps.assembly.sources.neighbours import LATE
from apps.core.isolation import isolated
from apps.engine import Candidate
from apps.engine.types import Reason, Source


@dataclass(frozen=True)
class _Walk:
    """The window's turns: earlier candidates it gave a distance, new ones, and those of other branches."""

    revised: tuple[Candidate, ...] = ()
    added: tuple[Candidate, ...] = ()
    off_branch: tuple[Candidate, ...] = ()
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


class WindowSource(CandidateSource):
    name = "the conversation window"
    past_deadline = False  # skipped with the neighbours when the search ended past the deadline

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        walk = _Walk() if LATE in request.deadline.skipped else _walk(request, gathered)
        found = Found(
            candidates=walk.added,
            revised=walk.revised,
            left_out=tuple(left_out(c, reason=Reason.OTHER_BRANCH) for c in walk.off_branch),
            warnings=walk.warnings,
            skipped=walk.skipped,
        )
        outside = _outside_conversation(request, gathered.adding(found).candidates)
        return Found(
            candidates=found.candidates,
            revised=found.revised,
            left_out=(*found.left_out, *(left_out(c) for c in outside)),
            warnings=found.warnings,
            skipped=found.skipped,
        )

    def failed(self) -> str:
        return degraded(Degraded.CANDIDATES_FAILED, "the conversation window could not be read")


def _walk(request: GatherRequest, gathered: Gathered) -> _Walk:
    """The window's walk over the candidates so far; a failed read keeps what it did and says so."""
    params, r = request.params, request.resolved
    # The conversation window holds turns only: a kinds or types filter that turns fail leaves it out.
    admits_turns = (not params.kinds or "message" in params.kinds) and not r.types
    layers = request.window_layers if admits_turns else ()
    size = r.resolution.title_distance + 1
    if not layers or size <= 0:
        return _Walk()
    known = {c.id: c for c in gathered.candidates if c.source == Source.ITEM}
    after, skipped = dict(known), list[str]()
    path, error = isolated(
        lambda: add_window(
            after,
            request.workspace.pk,
            layers,
            size,
            request.layer_names,
            skipped,
            params.message_id,
            gathered.searched.floor,
        ),
        what="the conversation window",
    )
    other = off_branch(after, path, set(layers)) if path else []
    return _Walk(
        revised=tuple(c for key, c in after.items() if key in known and c is not known[key]),
        added=tuple(c for key, c in after.items() if key not in known),
        off_branch=tuple(other),
        warnings=(degraded(Degraded.CANDIDATES_FAILED, "the conversation window could not be read"),) if error else (),
        skipped=tuple(skipped),
    )


def _outside_conversation(request: GatherRequest, candidates: tuple[Candidate, ...]) -> list[Candidate]:
    """With a named conversation, the messages gathered outside its layers (they are filtered)."""
    if not (request.window_layers and request.params.conversation_id):
        return []
    window = set(request.window_layers)
    return [c for c in candidates if c.kind == "message" and c.layer_id not in window]
