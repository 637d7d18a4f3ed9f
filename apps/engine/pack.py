"""Packing ranked candidates into an exact token budget.

Order: pinned first while they fit, then error hints, then by score. Each candidate takes the
richest rung of its compression ladder that the zone and its conversation distance allow and
that fits the remaining budget (for layer summaries: detailed → paragraph → sentence). Kinds
with a retrieval limit stop at the limit ("over_limit"). The first candidate that fits at no
rung is cut at a sentence boundary when that fits (marked truncated); smaller candidates
further down may still fill the remainder. Costs are estimated piece by piece (in text format a
conversation turn pays its day's `[YYYY-MM-DD]` line only when it is the first of that day in the
context, format.render_days), then the whole
string is counted exactly and the tail dropped until the count is within budget: the
invariant never rests on the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from apps.core.text import clip_words, cut_to_fit
from apps.engine.format import (
    FRAMES,
    Template,
    day,
    day_header,
    groups_by_day_in,
    render_days,
    render_piece,
)
from apps.engine.ladder import ladder
from apps.engine.overlap import DERIVED_SOURCES, sentence_keys, without_seen
from apps.engine.policy import CONSERVATIVE_MAX_ITEMS, Resolution, allowed_depths
from apps.engine.types import Assembled, Chunk, Counter, Reason, Rung, Scored, TraceEntry


@dataclass
class _Taken:
    scored: Scored
    text: str
    depth: str
    piece: str
    tokens: int
    truncated: bool
    in_day: bool = False


def _capped(rung: Rung, cap: int | None, count: Counter) -> Rung:
    """The rung, or its longest whole-sentence lead within `cap` tokens (a per-node cap);
    a rung with no sentence short enough is cut at words. Only a rung over its cap is counted twice."""
    if cap is None or len(rung.text) <= cap or count(rung.text) <= cap:  # a token is at least one character
        return rung
    text = cut_to_fit(rung.text, lambda t: count(t) <= cap) or clip_words(rung.text, lambda t: count(t) <= cap)
    return Rung(rung.depth, text or rung.text[:cap], prefix=rung.prefix)


def _trace(s: Scored, decision: str, reason: str, tokens: int, depth: str = "", room: int | None = None) -> TraceEntry:
    c = s.candidate
    return TraceEntry(
        id=c.id,
        source=c.source,
        external_id=c.external_id,
        kind=c.kind,
        type=c.type,
        layer=c.layer_id,
        score=s.score,
        parts=s.parts,
        decision=decision,
        reason=reason,
        depth=depth,
        tokens=tokens,
        origin=c.origin,
        room=room,
    )


def assemble(
    ranked: list[Scored],
    *,
    budget: int,
    fmt: str,
    count: Counter,
    zone: str = "normal",
    resolution: Resolution | None = None,
    limits: Mapping[str, int] | None = None,
    template: Template | None = None,
    stop: Callable[[], bool] | None = None,
) -> Assembled:
    """Pack `ranked` (already in priority order) into at most `budget` tokens of `fmt`.

    `stop` is asked before each candidate (the request's deadline): once true, the rest are left
    out with the reason "deadline" and the context is what was packed so far (exactly counted)."""
    if budget < 1:
        raise ValueError("budget must be positive")
    resolution = resolution or Resolution()
    limits = limits or {}
    frame = FRAMES[fmt]
    frame_cost = count(frame.head + frame.tail)
    sep_cost = count(frame.sep)
    taken: list[_Taken] = []
    decisions: dict[tuple[str, int], TraceEntry] = {}  # first occurrence of each candidate, in ranked order
    duplicates: list[TraceEntry] = []
    per_kind: dict[str, int] = {}
    unpinned_taken = 0
    used = frame_cost
    cut_made = False
    days: set[str] = set()  # days whose header is in the context (turns grouped by day, format.render_days)
    line_cost = count("\n")
    grouping = groups_by_day_in(fmt=fmt, template=template)
    failed: list[tuple[str, int]] = []
    seen: set[str] = set()  # the sentences of the items in the context (a summary must not repeat them)
    unseen: list[str] = []  # texts taken whose sentences are not in `seen` yet: added when a summary needs them
    stood_in: set[int] = set()  # window turns a community in the context stands in for

    def piece_of(s: Scored, text: str, depth: str, truncated: bool, in_day: bool) -> str:
        return render_piece(
            s.candidate,
            text,
            fmt=fmt,
            score=s.score,
            truncated=truncated,
            depth=depth,
            template=template,
            in_day=in_day,
        )

    for position, s in enumerate(ranked):
        if stop is not None and stop():
            for late in ranked[position:]:
                decisions.setdefault(late.candidate.key, _trace(late, "excluded", "deadline", 0))
            break
        c = s.candidate
        key = c.key
        try:
            if key in decisions:
                duplicates.append(_trace(s, "excluded", "duplicate", 0))
                continue
            if c.source == "item" and c.distance is not None and not c.pinned and c.id in stood_in:
                decisions[key] = _trace(s, "excluded", Reason.IN_COMMUNITY, 0)  # its community got in before it
                continue
            every_rung = ladder(c)
            depths, why_not = allowed_depths(c, zone=zone, resolution=resolution, rungs=every_rung)
            if not depths:
                decisions[key] = _trace(s, "excluded", why_not, 0)
                continue
            if c.source in DERIVED_SOURCES and unseen:
                for text in unseen:
                    seen.update(sentence_keys(text))
                unseen.clear()
            if c.source in DERIVED_SOURCES and seen:
                fresh = without_seen(every_rung, seen)
                if not fresh:
                    decisions[key] = _trace(s, "excluded", Reason.DUPLICATE_TEXT, 0)
                    continue
                every_rung = tuple(fresh)
                depths = tuple(d for d in depths if any(r.depth == d for r in fresh))
                if not depths:
                    decisions[key] = _trace(s, "excluded", Reason.DUPLICATE_TEXT, 0)
                    continue
            limit = limits.get(c.kind)
            if not c.pinned and limit is not None and per_kind.get(c.kind, 0) >= limit:
                decisions[key] = _trace(s, "excluded", "over_limit", 0)
                continue
            if zone == "conservative" and not c.pinned and unpinned_taken >= CONSERVATIVE_MAX_ITEMS:
                decisions[key] = _trace(s, "excluded", "zone", 0)
                continue
            in_day = grouping and c.kind == "message" and bool(c.role)  # format.groups_by_day
            if in_day and day(c) in days:  # one more line under a header already there
                extra = line_cost
            elif in_day:  # a new day's block: its header, then the turn
                extra = (sep_cost if taken else 0) + count(day_header(c))
            else:
                extra = sep_cost if taken else 0
            rungs = (
                every_rung if len(depths) == len(every_rung) else [rung for rung in every_rung if rung.depth in depths]
            )
            if c.kind == "message":
                rungs = [_capped(rung, resolution.cap(rung.depth), count) for rung in rungs]
            room = budget - used - extra
            can_cut = room > 0 and not cut_made  # only one cut: later ones would be scraps

            def cut(rung: Rung, s: Scored = s, room: int = room, in_day: bool = in_day) -> _Taken | None:
                def fits(text: str) -> bool:
                    return count(piece_of(s, text, rung.depth, True, in_day)) <= room

                text = cut_to_fit(rung.text, fits)
                if text is None:
                    return None
                piece = piece_of(s, text, rung.depth, True, in_day)
                return _Taken(s, text, rung.depth, piece, count(piece), True, in_day)

            rung_texts = {rung.text for rung in every_rung}  # a rung not among them was cut to its cap
            chosen: _Taken | None = None
            first_cost = 0
            for index, rung in enumerate(rungs):
                piece = piece_of(s, rung.text, rung.depth, False, in_day)
                cost = count(piece)
                first_cost = first_cost or cost
                if cost <= room:
                    chosen = _Taken(s, rung.text, rung.depth, piece, cost, rung.text not in rung_texts, in_day)
                    break
                lower = rungs[index + 1] if index + 1 < len(rungs) else None
                if can_cut and lower is not None and lower.prefix:
                    # The next rung is only a leading excerpt: filling the room with whole sentences beats it.
                    chosen = cut(rung)
                    if chosen is not None and (
                        len(chosen.text) >= len(lower.text)
                        or count(piece_of(s, lower.text, lower.depth, False, in_day)) > room
                    ):
                        break
                    chosen = None
            if chosen is None and can_cut and rungs:
                chosen = cut(rungs[0])
            if chosen is None:
                decisions[key] = _trace(s, "excluded", "over_budget", first_cost, room=max(room, 0))
                continue
            taken.append(chosen)
            if in_day:
                days.add(day(c))
            if c.source == "item":
                unseen.append(chosen.text)
            stood_in.update(c.stands_in_for)
            capped = chosen.truncated and any(chosen.text == rung.text for rung in rungs)  # cut to its cap
            cut_made = cut_made or (chosen.truncated and not capped)
            used += extra + chosen.tokens
            per_kind[c.kind] = per_kind.get(c.kind, 0) + 1
            unpinned_taken += 0 if c.pinned else 1
            if capped:
                reason = f"cut to its {chosen.depth} cap ({resolution.cap(chosen.depth)} tokens)"
                decisions[key] = _trace(s, "truncated", reason, chosen.tokens, chosen.depth)
            elif chosen.truncated:
                reason = f"cut at a sentence boundary ({first_cost} → {chosen.tokens} tokens)"
                decisions[key] = _trace(s, "truncated", reason, chosen.tokens, chosen.depth)
            else:
                decisions[key] = _trace(s, "included", "fits", chosen.tokens, chosen.depth)
        except Exception:  # noqa: BLE001 - a candidate that cannot be rendered or counted is left out
            if taken and taken[-1].scored is s:
                taken.pop()
            decisions[key] = _trace(s, "excluded", "failed", 0)
            failed.append(key)

    def whole() -> str:
        return render_days([(t.scored.candidate, t.piece, t.in_day) for t in taken], fmt=fmt)

    context = whole()
    total = count(context)
    while taken and total > budget:  # the estimate missed a merge across a boundary: drop the tail
        dropped = taken.pop()
        key = dropped.scored.candidate.key
        decisions[key] = _trace(dropped.scored, "excluded", "over_budget", dropped.tokens)
        context = whole()
        total = count(context)
    if total > budget:  # only the empty frame is left and even it does not fit
        context, total = "", 0

    chunks = tuple(
        Chunk(
            id=t.scored.candidate.id,
            source=t.scored.candidate.source,
            external_id=t.scored.candidate.external_id,
            kind=t.scored.candidate.kind,
            type=t.scored.candidate.type,
            layer=t.scored.candidate.layer_id,
            layer_name=t.scored.candidate.layer_name,
            text=t.text,
            depth=t.depth,
            tokens=t.tokens,
            score=t.scored.score,
            truncated=t.truncated,
            pinned=t.scored.candidate.pinned,
            created_at=t.scored.candidate.created_at,
            confidence=t.scored.candidate.confidence,
        )
        for t in taken
    )
    overflow = 0
    for e in decisions.values():
        if e.decision == "excluded" and (e.reason == "over_budget" or e.reason == "over_limit"):
            overflow += 1
    return Assembled(
        context=context,
        total_tokens=total,
        chunks=chunks,
        trace=(*decisions.values(), *duplicates),
        truncated_count=sum(1 for t in taken if t.truncated),
        overflow_count=overflow,
        failed=tuple(failed),
    )
