"""A record's decision trace as the console shows it, every candidate explained (explain.py) and the
rows filtered by decision, origin, kind and text. A cache hit's record has no trace of its own: it
shows the original's, and says so."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict

from apps.assembly.models import AssemblyRecord
from apps.assembly.recorded import request_decisions
from apps.assembly.selectors import assembly_record_get
from apps.web.console.explain import Explained, explain_rows, record_weights
from apps.web.selectors.candidates import CandidateRow, trace_rows

DECISIONS = (("", "Any decision"), ("in", "Included"), ("out", "Left out"))


@dataclass(frozen=True)
class TraceFilters:
    """The candidate filters of the trace page (`?decision=out&origin=vector&kind=message&q=car`)."""

    decision: str = ""
    origin: str = ""
    kind: str = ""
    q: str = ""

    @classmethod
    def of(cls, query: QueryDict) -> TraceFilters:
        decision = query.get("decision", "")
        return cls(
            decision=decision if decision in ("in", "out") else "",
            origin=query.get("origin", "")[:40],
            kind=query.get("kind", "")[:40],
            q=" ".join(query.get("q", "").split())[:200],
        )

    @property
    def active(self) -> bool:
        return bool(self.decision or self.origin or self.kind or self.q)

    def keeps(self, row: Explained) -> bool:
        r = row.row
        if self.decision and (r.included != (self.decision == "in")):
            return False
        if (self.origin and r.origin != self.origin) or (self.kind and r.kind != self.kind):
            return False
        if self.q:
            text = " ".join(
                f"{r.excerpt} | {r.layer_name} | {r.external_id or ''} | {row.why} | {r.decision_text}".split()
            )
            return self.q.lower() in text.lower()  # the words as typed, in a row (a number alone matches ranks too)
        return True


@dataclass(frozen=True)
class TraceView:
    """A record with the record whose decisions it shows (itself, or a cache hit's original)."""

    record: AssemblyRecord
    decisions_of: AssemblyRecord | None  # None: a cache hit whose original is gone
    cached_from: str | None
    rows: list[CandidateRow]
    explained: list[Explained] = field(default_factory=list)
    weights_kept: bool = True  # False: a record from before the weights were kept (the defaults are shown)
    decided: dict[str, Any] = field(default_factory=dict)  # zone, format, template, ranking, weights, ...

    def shown(self, filters: TraceFilters) -> list[Explained]:
        return [row for row in self.explained if filters.keeps(row)]

    @property
    def origins(self) -> list[str]:
        return sorted({row.origin for row in self.rows})

    @property
    def kinds(self) -> list[str]:
        return sorted({row.kind for row in self.rows})

    @property
    def request_json(self) -> str:
        """The request as the record keeps it (the query redacted), for the page."""
        return json.dumps(self.record.request, indent=2, sort_keys=True, default=str)

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
        source = assembly_record_get(workspace_id=record.workspace_id, trace_id=cached_from)
    trace = list(source.trace or []) if source is not None else []
    rows = trace_rows(workspace_id=record.workspace_id, trace=trace)
    decided = request_decisions(source.request) if source is not None else {}
    return TraceView(
        record=record,
        decisions_of=source,
        cached_from=cached_from,
        rows=rows,
        explained=explain_rows(workspace_id=record.workspace_id, rows=rows, trace=trace, request=decided),
        weights_kept=record_weights(decided)[1],
        decided=decided,
    )
