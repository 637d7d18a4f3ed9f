"""`context_pinned`: a request packed again with one candidate pinned, and what that would displace.

The trace page's "why not?": the recorded request is assembled now (not recorded, not cached), its
ranked candidates packed as they are and again with the asked candidate pinned (pinned candidates
go first while they fit, engine/pack.py). The difference is what pinning it would cost: the chunks
it pushes out. A candidate that is not among today's ranked candidates (a community stands in for
it, it is filtered, it is gone) cannot be pinned into this packing: its decision says why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from apps.assembly.params import ContextParams
from apps.assembly.services.assembling import assemble_outcome, pack
from apps.assembly.services.context import redacted
from apps.engine import Scored, TraceEntry
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class PinnedPacking:
    """The candidate's decision now and pinned, and the chunks that pinning it would leave out."""

    now: TraceEntry | None  # its decision in today's packing (None: not a candidate today)
    pinned: TraceEntry | None  # its decision when pinned (None: it could not be pinned into this packing)
    displaced: tuple[TraceEntry, ...]  # in today's context, left out once it is pinned
    tokens_now: int
    tokens_pinned: int
    budget: int


def context_pinned(*, workspace: Workspace, params: ContextParams, source: str, candidate_id: int) -> PinnedPacking:
    """Assemble `params` now and pack it twice: as it is, and with (source, candidate_id) pinned."""
    params = redacted(workspace, params)
    outcome = assemble_outcome(workspace=workspace, params=params, started=time.perf_counter())
    budget = outcome.resolved.budget
    if outcome.result is None:  # no budget left in this zone: nothing is packed either way
        return PinnedPacking(now=None, pinned=None, displaced=(), tokens_now=0, tokens_pinned=0, budget=budget)
    key = (source, candidate_id)
    decisions = {(e.source, e.id): e for e in (*outcome.result.trace, *outcome.extra_trace)}
    found = next((s for s in outcome.ranked if s.candidate.key == key), None)
    if found is None:
        return PinnedPacking(
            now=decisions.get(key),
            pinned=None,
            displaced=(),
            tokens_now=outcome.result.total_tokens,
            tokens_pinned=outcome.result.total_tokens,
            budget=budget,
        )
    alt = pack(_pinned_first(outcome.ranked, found), outcome.resolved, budget)
    after = {(e.source, e.id): e for e in alt.trace}
    displaced = tuple(
        e
        for e in outcome.result.trace
        if e.decision != "excluded"
        and (e.source, e.id) != key
        and after.get((e.source, e.id), e).decision == "excluded"
    )
    return PinnedPacking(
        now=decisions.get(key),
        pinned=after.get(key),
        displaced=displaced,
        tokens_now=outcome.result.total_tokens,
        tokens_pinned=alt.total_tokens,
        budget=budget,
    )


def _pinned_first(ranked: list[Scored], chosen: Scored) -> list[Scored]:
    """`ranked` with `chosen` pinned, after the candidates pinned already (pinned go first, by score)."""
    pinned = replace(chosen, candidate=replace(chosen.candidate, pinned=True), parts={**chosen.parts, "pinned": 1.0})
    rest = [s for s in ranked if s is not chosen]
    at = next((index for index, s in enumerate(rest) if not s.candidate.pinned), len(rest))
    return [*rest[:at], pinned, *rest[at:]]
