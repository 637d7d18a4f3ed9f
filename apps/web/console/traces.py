"""A record's decision trace as the console shows it. A cache hit's record has no trace of its own:
it shows the original's, and says so."""

from __future__ import annotations

from dataclasses import dataclass

from apps.assembly.models import AssemblyRecord
from apps.web.selectors.candidates import CandidateRow, trace_rows


@dataclass(frozen=True)
class TraceView:
    """A record with the record whose decisions it shows (itself, or a cache hit's original)."""

    record: AssemblyRecord
    decisions_of: AssemblyRecord | None  # None: a cache hit whose original is gone
    cached_from: str | None
    rows: list[CandidateRow]

    @property
    def included(self) -> list[CandidateRow]:
        return [row for row in self.rows if row.included]

    @property
    def left_out(self) -> list[CandidateRow]:
        return [row for row in self.rows if not row.included]


def trace_view(*, record: AssemblyRecord) -> TraceView:
    """The rows to show for `record`: its own trace, or its original's when it was served from the cache."""
    request = record.request if isinstance(record.request, dict) else {}
    cached_from = str(request["cached_from"]) if request.get("cached_from") else None
    source: AssemblyRecord | None = record
    if cached_from:
        source = AssemblyRecord.objects.filter(workspace_id=record.workspace_id, trace_id=cached_from).first()
    trace = list(source.trace or []) if source is not None else []
    return TraceView(
        record=record,
        decisions_of=source,
        cached_from=cached_from,
        rows=trace_rows(workspace_id=record.workspace_id, trace=trace),
    )
