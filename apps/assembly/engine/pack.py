"""Packing ranked candidates into an exact token budget.

Order: pinned first while they fit, then by score. The first item that does not fit whole is cut
at a sentence boundary when that fits (marked truncated); smaller whole items further down may
still fill the remainder. Costs are estimated piece by piece, then the whole string is counted exactly and
the tail is dropped until the exact count is within budget: the invariant never rests on the
estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.assembly.engine.format import FRAMES, render, render_piece
from apps.assembly.engine.truncate import cut_to_fit
from apps.assembly.engine.types import Assembled, Chunk, Counter, Scored, TraceEntry


@dataclass
class _Taken:
    scored: Scored
    text: str
    piece: str
    tokens: int
    truncated: bool


def _trace(s: Scored, decision: str, reason: str, tokens: int) -> TraceEntry:
    c = s.candidate
    return TraceEntry(
        id=c.id,
        external_id=c.external_id,
        kind=c.kind,
        type=c.type,
        layer=c.layer_id,
        score=s.score,
        parts=s.parts,
        decision=decision,
        reason=reason,
        tokens=tokens,
    )


def assemble(ranked: list[Scored], *, budget: int, fmt: str, count: Counter) -> Assembled:
    """Pack `ranked` (already in priority order) into at most `budget` tokens of `fmt`."""
    if budget < 1:
        raise ValueError("budget must be positive")
    frame = FRAMES[fmt]
    frame_cost = count(frame.head + frame.tail)
    sep_cost = count(frame.sep)
    taken: list[_Taken] = []
    decisions: dict[int, TraceEntry] = {}  # first occurrence of each candidate id, in ranked order
    duplicates: list[TraceEntry] = []
    used = frame_cost

    for s in ranked:
        c = s.candidate
        if c.id in decisions:
            duplicates.append(_trace(s, "excluded", "duplicate", 0))
            continue
        extra = sep_cost if taken else 0
        piece = render_piece(c, c.content, fmt=fmt, score=s.score, truncated=False)
        cost = count(piece)
        if used + extra + cost <= budget:
            taken.append(_Taken(s, c.content, piece, cost, False))
            used += extra + cost
            decisions[c.id] = _trace(s, "included", "fits", cost)
            continue
        room = budget - used - extra

        def fits(text: str, s: Scored = s, room: int = room) -> bool:
            return count(render_piece(s.candidate, text, fmt=fmt, score=s.score, truncated=True)) <= room

        # Only the first item that does not fit whole is cut; later ones would be scraps.
        cut = cut_to_fit(c.content, fits) if room > 0 and not any(t.truncated for t in taken) else None
        if cut is not None:
            piece = render_piece(c, cut, fmt=fmt, score=s.score, truncated=True)
            cut_cost = count(piece)
            taken.append(_Taken(s, cut, piece, cut_cost, True))
            used += extra + cut_cost
            decisions[c.id] = _trace(
                s, "truncated", f"cut at a sentence boundary ({cost} → {cut_cost} tokens)", cut_cost
            )
        else:
            decisions[c.id] = _trace(s, "excluded", "over_budget", cost)

    context = render([t.piece for t in taken], fmt=fmt)
    total = count(context)
    while taken and total > budget:  # the estimate missed a merge across a boundary: drop the tail
        dropped = taken.pop()
        decisions[dropped.scored.candidate.id] = _trace(dropped.scored, "excluded", "over_budget", dropped.tokens)
        context = render([t.piece for t in taken], fmt=fmt)
        total = count(context)
    if total > budget:  # only the empty frame is left and even it does not fit
        context, total = "", 0

    chunks = tuple(
        Chunk(
            id=t.scored.candidate.id,
            external_id=t.scored.candidate.external_id,
            kind=t.scored.candidate.kind,
            type=t.scored.candidate.type,
            layer=t.scored.candidate.layer_id,
            layer_name=t.scored.candidate.layer_name,
            text=t.text,
            tokens=t.tokens,
            score=t.scored.score,
            truncated=t.truncated,
        )
        for t in taken
    )
    overflow = sum(1 for e in decisions.values() if e.decision == "excluded" and e.reason == "over_budget")
    return Assembled(
        context=context,
        total_tokens=total,
        token_budget=budget,
        chunks=chunks,
        trace=(*decisions.values(), *duplicates),
        truncated_count=sum(1 for t in taken if t.truncated),
        overflow_count=overflow,
    )
