"""Two profiles (or a profile's unsaved settings against its saved ones) tried on the same request.

Each side is one `context_preview` (the /preview/ page's service); the difference is
`assembly.context_diff`, the console replay's. A side with a `draft` runs on those settings
through `context_preview(profile_draft=...)` and writes nothing; a side without runs on the stored
profile and is recorded like any preview (so its trace can be opened).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from apps.assembly.context_diff import ChunkKey, ContextDiff, context_diff
from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.results import ContextResult
from apps.assembly.services import context_preview
from apps.profiles.services import ProfileInput
from apps.web.selectors.candidates import CandidateRow, trace_rows
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Contender:
    """One side: a profile's name, and unsaved settings to use instead of its stored ones."""

    label: str
    profile: str
    draft: ProfileInput | None = None


@dataclass(frozen=True)
class TrialSide:
    """One side's answer and the chunks it put in the context, in packing order."""

    label: str
    result: ContextResult
    rows: list[CandidateRow]
    changed: frozenset[ChunkKey]  # this side's chunks the other side lacks
    recorded: bool

    @property
    def used_percent(self) -> float:
        budget = self.result.token_budget
        return round(min(100.0, 100.0 * self.result.total_tokens / budget), 1) if budget else 0.0

    @property
    def entries(self) -> list[tuple[CandidateRow, bool]]:
        """Each chunk, and whether the other side lacks it."""
        return [(row, (row.source, row.id) in self.changed) for row in self.rows]


@dataclass(frozen=True)
class Change:
    """A chunk that one side put in and the other did not, or that both put in at other ranks:
    `row` as the side that has it saw it, `other` the same candidate in the other side's trace
    (None: the other side never had it as a candidate)."""

    row: CandidateRow
    other: CandidateRow | None
    other_letter: str  # "A" or "B"

    @property
    def other_text(self) -> str:
        """What the other side did with it, in words: "in A: left out: did not fit the token budget (ranked 34th)"."""
        if self.other is None:
            return f"in {self.other_letter}: not a candidate"
        return f"in {self.other_letter}: {self.other.decision_text} (ranked {_ordinal(self.other.rank)})"

    @property
    def rank_text(self) -> str:
        """A's rank and score to B's: "12th → 3rd, score 0.412 → 0.655"; one side's alone when the other has none."""
        a, b = (self.other, self.row) if self.other_letter == "A" else (self.row, self.other)
        if a is None or b is None:
            only = a or b
            assert only is not None
            return f"{_ordinal(only.rank)}, score {only.score:.3f}"
        return f"{_ordinal(a.rank)} → {_ordinal(b.rank)}, score {a.score:.3f} → {b.score:.3f}"


@dataclass(frozen=True)
class Comparison:
    """B against A: both answers, the chunks B added and removed (each with what the other side did
    with it), the chunks both kept at another rank, the tokens."""

    a: TrialSide
    b: TrialSide
    diff: ContextDiff
    added: list[Change]
    removed: list[Change]
    moved: list[Change]  # in both contexts, ranked differently (B's row, A's as `other`)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _by_key(rows: list[CandidateRow]) -> dict[tuple[str, int], CandidateRow]:
    """Each candidate's row by (source, id): the included one where a duplicate was also left out."""
    out: dict[tuple[str, int], CandidateRow] = {}
    for row in rows:
        key = (row.source, row.id)
        if key not in out or (row.included and not out[key].included):
            out[key] = row
    return out


def _run(workspace: Workspace, params: ContextParams, side: Contender) -> tuple[ContextResult, list[dict[str, Any]]]:
    asked = replace(params, profile=side.profile)
    preview = context_preview(
        workspace=workspace, params=asked, profile_draft=side.draft, what_if=(), origin=RecordOrigin.PAGE
    )
    return preview.result, [entry.as_dict() for entry in preview.trace]


def profiles_compare(*, workspace: Workspace, params: ContextParams, a: Contender, b: Contender) -> Comparison:
    """Run `params` as A and as B; raises the service's DomainError on a request it refuses."""
    result_a, trace_a = _run(workspace, params, a)
    result_b, trace_b = _run(workspace, params, b)
    diff = context_diff(
        before=trace_a, after=trace_b, tokens_before=result_a.total_tokens, tokens_after=result_b.total_tokens
    )
    all_a = _by_key(trace_rows(workspace_id=workspace.pk, trace=trace_a))
    all_b = _by_key(trace_rows(workspace_id=workspace.pk, trace=trace_b))
    rows_a = {key: row for key, row in all_a.items() if row.included}
    rows_b = {key: row for key, row in all_b.items() if row.included}
    kept = [key for key in rows_b if key in rows_a]
    return Comparison(
        a=TrialSide(a.label, result_a, list(rows_a.values()), frozenset(diff.removed), a.draft is None),
        b=TrialSide(b.label, result_b, list(rows_b.values()), frozenset(diff.added), b.draft is None),
        diff=diff,
        added=[Change(rows_b[key], all_a.get(key), "A") for key in diff.added],
        removed=[Change(rows_a[key], all_b.get(key), "B") for key in diff.removed],
        moved=[Change(rows_b[key], rows_a[key], "A") for key in kept if rows_b[key].rank != rows_a[key].rank],
    )
