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
from apps.assembly.params import ContextParams
from apps.assembly.results import ContextResult
from apps.assembly.services import context_preview
from apps.profiles.services import ProfileInput
from apps.web.selectors.candidates import CandidateRow, included_rows
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
class Comparison:
    """B against A: both answers, the chunks B added and removed, the tokens."""

    a: TrialSide
    b: TrialSide
    diff: ContextDiff
    added: list[CandidateRow]
    removed: list[CandidateRow]


def _run(workspace: Workspace, params: ContextParams, side: Contender) -> tuple[ContextResult, list[dict[str, Any]]]:
    asked = replace(params, profile=side.profile)
    preview = context_preview(workspace=workspace, params=asked, profile_draft=side.draft)
    return preview.result, [entry.as_dict() for entry in preview.trace]


def profiles_compare(*, workspace: Workspace, params: ContextParams, a: Contender, b: Contender) -> Comparison:
    """Run `params` as A and as B; raises the service's DomainError on a request it refuses."""
    result_a, trace_a = _run(workspace, params, a)
    result_b, trace_b = _run(workspace, params, b)
    diff = context_diff(
        before=trace_a, after=trace_b, tokens_before=result_a.total_tokens, tokens_after=result_b.total_tokens
    )
    rows_a = included_rows(workspace_id=workspace.pk, trace=trace_a)
    rows_b = included_rows(workspace_id=workspace.pk, trace=trace_b)
    return Comparison(
        a=TrialSide(a.label, result_a, list(rows_a.values()), frozenset(diff.removed), a.draft is None),
        b=TrialSide(b.label, result_b, list(rows_b.values()), frozenset(diff.added), b.draft is None),
        diff=diff,
        added=[rows_b[key] for key in diff.added],
        removed=[rows_a[key] for key in diff.removed],
    )
