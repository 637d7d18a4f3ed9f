"""Why each candidate of a trace got in or not, in words: its rank, its score as the formula with the
weights it was ranked with, and its decision ("ranked 34th; the budget was spent by #17; would have
needed 48 more tokens"). A community's stand-in names the community and says whether it got in.

Read from the record alone (its request keeps the resolved weights, its trace each candidate's parts
and, for one left out for the budget, the room there was), so an old trace explains itself as it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from apps.conversations.selectors import communities_of_members, community_texts
from apps.engine import RankWeights
from apps.engine.types import Reason
from apps.web.selectors.candidates import REASONS, CandidateRow, reason_text

# The score parts that are weighted (engine/rank.py score_parts): the engine's weights less the
# fusion's two and the half-life, which is a parameter, not a weight. The others are shown, not counted.
WEIGHTED = tuple(f.name for f in fields(RankWeights) if f.name not in {"vector", "keyword", "recency_half_life_days"})
TIMES = "\u00d7"
# Decided before packing (filters, stand-ins, the similarity floor): no place in the packing order.
UNRANKED = frozenset(
    {
        Reason.FILTERED,
        Reason.KIND_FILTER,
        Reason.IN_COMMUNITY,
        Reason.IN_PROMPT,
        Reason.PROFILE_EXCLUDED,
        Reason.FAILED,
        Reason.BELOW_FLOOR,
    }
)


@dataclass(frozen=True)
class Term:
    """One weighted part of a score and its share of it: weight * value / the sum of the weights."""

    name: str
    weight: float
    value: float
    share: float


@dataclass(frozen=True)
class Explained:
    """A trace row with its rank among the ranked candidates, its score's formula and its decision in words."""

    row: CandidateRow
    rank: int | None  # None: decided before ranking (filtered, stood in for, failed)
    terms: tuple[Term, ...]
    formula: str  # "(0.80*0.705 relevance + 0.05*0.000 recency + ...) / 0.95 = 0.646", with multiplication signs
    why: str
    room: int | None  # over_budget: the tokens free when it came up

    @property
    def key(self) -> str:
        return f"{self.row.source}-{self.row.id}"

    @property
    def needed(self) -> int | None:
        return None if self.room is None else max(self.row.tokens - self.room, 0)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def record_weights(request: dict[str, Any]) -> tuple[dict[str, float], bool]:
    """The weights the record was ranked with, and whether the record kept them (else the defaults)."""
    kept = request.get("weights")
    if isinstance(kept, dict) and kept:
        return {str(k): float(v) for k, v in kept.items()}, True
    return {k: float(v) for k, v in asdict(RankWeights()).items()}, False


def score_terms(parts: dict[str, float], weights: dict[str, float]) -> tuple[tuple[Term, ...], str]:
    """The weighted mean of the applicable parts (engine/rank.py weighted_score), term by term and as a formula."""
    names = [name for name in WEIGHTED if name in parts]
    total = sum(weights.get(name, 0.0) for name in names)
    terms = tuple(
        Term(
            name=name,
            weight=weights.get(name, 0.0),
            value=parts[name],
            share=weights.get(name, 0.0) * parts[name] / total if total > 0 else 0.0,
        )
        for name in names
    )
    if not terms:
        return (), ""
    sum_text = " + ".join(f"{t.weight:.2f}{TIMES}{t.value:.3f} {t.name}" for t in terms)
    score = sum(t.share for t in terms)
    return terms, f"({sum_text}) / {total:.2f} = {score:.3f}"


def explain_rows(
    *, workspace_id: int, rows: list[CandidateRow], trace: list[dict[str, Any]], request: dict[str, Any]
) -> list[Explained]:
    """Every row of `trace` explained (rows are `trace_rows` of the same trace, in the same order)."""
    weights, _ = record_weights(request)
    ranking = str(request.get("ranking") or "default")
    ranks: dict[int, int] = {}  # trace index → rank among the ranked candidates
    rank_of: dict[tuple[str, int], int] = {}  # a candidate's rank (its first occurrence)
    for index, row in enumerate(rows):
        if row.reason not in UNRANKED and row.reason != "duplicate":
            ranks[index] = len(ranks) + 1
            rank_of.setdefault((row.source, row.id), ranks[index])
    stand_ins = _stand_ins(workspace_id, rows, rank_of)
    out = []
    last_in: int | None = None  # the rank of the last candidate included above the current one
    for index, (row, entry) in enumerate(zip(rows, trace, strict=True)):
        parts = {str(k): float(v) for k, v in (entry.get("parts") or {}).items()}
        terms, formula = score_terms(parts, weights)
        if formula and ranking != "default":
            formula = f"ranking {ranking!r} decides; the default formula would give {formula}"
        rank = ranks.get(index)
        room = int(entry["room"]) if entry.get("room") is not None else None
        explained = Explained(
            row=row,
            rank=rank,
            terms=terms,
            formula=formula,
            why=_why(row, rank, room, last_in, rank_of, stand_ins),
            room=room,
        )
        out.append(explained)
        if row.included and rank is not None:
            last_in = rank
    return out


def _why(
    row: CandidateRow,
    rank: int | None,
    room: int | None,
    last_in: int | None,
    rank_of: dict[tuple[str, int], int],
    stand_ins: dict[int, str],
) -> str:
    ranked = f"ranked {ordinal(rank)}" if rank is not None else "not ranked"
    if row.included:
        first = "pinned: goes first whatever its score; " if row.pinned else ""
        if row.source == "error_hint":
            first = "a known fix: goes before the scored candidates; "
        if row.decision == "truncated":
            return f"{first}{ranked}; cut to the {row.tokens} tokens left ({row.reason})"
        return f"{first}{ranked}; in at {row.depth} ({row.tokens} tokens)"
    if row.reason == "over_budget":
        by = f"the budget was spent by #{last_in}" if last_in is not None else "nothing above it got in"
        if room is None:  # a trace recorded before the engine kept the room
            return f"{ranked}; {by}; it needed {row.tokens} tokens"
        if last_in is None:
            return f"{ranked}; it needed {row.tokens} tokens and only {room} were free: more than the whole context"
        return f"{ranked}; {by}; would have needed {row.tokens - room} more tokens ({row.tokens} for {room} free)"
    if row.reason == "duplicate":
        original = rank_of.get((row.source, row.id))
        return f"a duplicate of #{original}" if original is not None else "a duplicate of a candidate above"
    if row.reason == "in_community":
        return stand_ins.get(row.id, "a community's summary stands in for it")
    if row.reason == "deadline":
        return f"{ranked}; the deadline passed before packing reached it"
    if row.reason == "failed":
        return "could not be ranked, rendered or counted (see the warnings)"
    if row.reason == "superseded":
        return reason_text(row.reason, row.superseded_by)
    return f"{ranked}; {reason_text(row.reason)}"


def _stand_ins(workspace_id: int, rows: list[CandidateRow], rank_of: dict[tuple[str, int], int]) -> dict[int, str]:
    """For each message a community stands in for: which community (its trace row), and whether it got in."""
    stood = [row.id for row in rows if row.reason == "in_community" and row.source == "item"]
    communities = {row.id: row for row in rows if row.source == "community"}
    if not stood or not communities:
        return {}
    members = communities_of_members(workspace_id=workspace_id, community_ids=communities, item_ids=stood)
    titles = {
        key: title for key, (title, _) in community_texts(workspace_id=workspace_id, community_ids=communities).items()
    }
    out = {}
    for item_id, community_ids in members.items():
        named = []
        for community_id in community_ids:
            row = communities[community_id]
            title = titles.get(community_id, f"#{community_id}")
            fate = "which got in" if row.included else f"which was left out too ({REASONS.get(row.reason, row.reason)})"
            named.append(f"community “{title}” (#{rank_of.get(('community', community_id), '?')}), {fate}")
        out[item_id] = "stood in for by " + "; ".join(named)
    return out
