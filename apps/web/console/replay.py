"""Replay: run a recorded request again now and say what changed (chunks added and removed, tokens).

The record keeps the request as the caller sent it (every ContextParams field, the query and error
redacted), so the replay asks for the same thing against today's content. What the record cannot
give back is said in `notes`: a query vector (not stored), redacted words of the query, and for a
record written before that shape, the context window and usage that chose the token zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.assembly.context_diff import context_diff
from apps.assembly.errors import TRACE_NOT_FOUND
from apps.assembly.models import AssemblyRecord, RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.recorded import recorded_request
from apps.assembly.selectors import assembly_record_get
from apps.assembly.services import context_preview
from apps.core.errors import InvalidInput
from apps.layers.errors import LAYER_NOT_FOUND
from apps.web.selectors.candidates import CandidateRow, included_rows


@dataclass(frozen=True)
class ReplayDiff:
    """The replay's record and how its context differs from the original's."""

    original_trace_id: str
    trace_id: str
    added: list[CandidateRow]
    removed: list[CandidateRow]
    kept: int
    tokens_before: int
    tokens_after: int
    partial: bool
    warnings: list[str]
    notes: list[str]
    compared: bool  # False: the original kept no trace (not sampled), only tokens compare

    @property
    def token_difference(self) -> int:
        return self.tokens_after - self.tokens_before

    @property
    def unchanged(self) -> bool:
        return self.compared and not self.added and not self.removed and self.token_difference == 0


def replay_params(*, request: dict[str, Any], layer_id: int | None) -> tuple[ContextParams, list[str]]:
    """The recorded request as ContextParams (either shape, apps/assembly/recorded.py), with what could
    not be restored."""
    recorded = recorded_request(request, layer_id=layer_id)
    params = recorded.params
    if params.layer_id is None and params.layer_external_id is None:
        raise InvalidInput("the recorded layer no longer exists", code=LAYER_NOT_FOUND)
    notes: list[str] = []
    if "query_vector" in recorded.not_recorded:
        notes.append("the original sent a query vector, which is not recorded: the replay searches by the query text")
    if "[REDACTED" in params.query:
        notes.append("the recorded query is redacted: the replay searches with the redaction markers")
    if recorded.zone_lost:
        notes.append(
            f"the original ran in the {recorded.zone_lost} zone; its context window and usage are not recorded, "
            "so the replay runs in the normal zone"
        )
    return params, notes


def record_replay(*, record: AssemblyRecord) -> ReplayDiff:
    """Run `record`'s request now (a cache hit replays its original's) and compare the contexts.

    Raises DomainError when the request cannot run any more (its layer or profile is gone).
    """
    original = record
    request = record.request if isinstance(record.request, dict) else {}
    if request.get("cached_from"):
        found = assembly_record_get(workspace_id=record.workspace_id, trace_id=request["cached_from"])
        if found is None:
            raise InvalidInput("the answer this cache hit came from is no longer recorded", code=TRACE_NOT_FOUND)
        original = found
        request = original.request if isinstance(original.request, dict) else {}
    params, notes = replay_params(request=request, layer_id=original.layer_id)
    preview = context_preview(workspace=original.workspace, params=params, what_if=(), origin=RecordOrigin.PAGE)
    result, trace = preview.result, [entry.as_dict() for entry in preview.trace]
    compared = bool(original.trace) or original.items_included == 0
    if not compared:
        notes.append("the original's trace was not sampled (TRACE_SAMPLE_RATE): only the token totals compare")
    change = context_diff(
        before=original.trace or [], after=trace, tokens_before=original.tokens_used, tokens_after=result.total_tokens
    )
    before = included_rows(workspace_id=record.workspace_id, trace=original.trace or [])
    after = included_rows(workspace_id=record.workspace_id, trace=trace)
    return ReplayDiff(
        original_trace_id=str(original.trace_id),
        trace_id=result.trace_id,
        added=[after[key] for key in change.added] if compared else [],
        removed=[before[key] for key in change.removed],
        kept=change.kept,
        tokens_before=change.tokens_before,
        tokens_after=change.tokens_after,
        partial=result.partial,
        warnings=list(result.warnings),
        notes=notes,
        compared=compared,
    )
