"""`/console/traces/<id>/`: one assembly made readable, and its replay. Staff only."""

from __future__ import annotations

import uuid

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from apps.assembly.models import AssemblyRecord
from apps.assembly.timings import STAGES
from apps.core.errors import DomainError
from apps.core.htmx import is_htmx
from apps.web.console.access import staff_view
from apps.web.console.replay import ReplayDiff, record_replay
from apps.web.console.selectors import assembly_record_get
from apps.web.console.traces import trace_view
from apps.web.workspace_choice import WorkspaceAccess

TEMPLATE = "console/trace.html"
STAGE_LABELS = {
    "resolve": "resolve the request",
    "embedding": "query embedding",
    "vector_search": "vector search",
    "keyword_search": "keyword search",
    "candidates": "other candidates",
    "ranking": "ranking",
    "packing": "packing",
    "record": "record",
    "cache": "assembly cache",
}


def _record(access: WorkspaceAccess, trace_id: uuid.UUID) -> AssemblyRecord:
    assert access.current is not None
    record = assembly_record_get(workspace=access.current, trace_id=trace_id)
    if record is None:
        raise Http404("No such trace in this workspace.")
    return record


def _timings(record: AssemblyRecord) -> list[dict[str, object]]:
    """Stage rows with their share of the slowest stage (for the bars)."""
    timings = getattr(record, "timings", None) or {}
    if not timings:
        return []
    slowest = max(float(ms) for ms in timings.values()) or 1.0
    order = {stage: index for index, stage in enumerate((*STAGES, "cache"))}
    return [
        {
            "stage": name,
            "label": STAGE_LABELS.get(name, name.replace("_", " ")),
            "ms": float(ms),
            "share": round(100 * float(ms) / slowest, 1),
        }
        for name, ms in sorted(timings.items(), key=lambda pair: order.get(pair[0], len(order)))
    ]


@staff_view
def trace(request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID) -> HttpResponse:
    """The record's figures, stage timings, warnings and every candidate's decision."""
    record = _record(access, trace_id)
    view = trace_view(record=record)
    context = {
        "view": view,
        "record": record,
        "timings": _timings(record),
        "crumbs": [("Console", "/console/"), (f"Trace {str(record.trace_id)[:8]}", None)],
    }
    return render(request, TEMPLATE, context)


@require_POST
@staff_view
def replay(request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID) -> HttpResponse:
    """Run the recorded request now; HTMX gets the #replay fragment, a plain POST the whole page."""
    record = _record(access, trace_id)
    diff: ReplayDiff | None = None
    error = ""
    try:
        diff = record_replay(record=record)
    except DomainError as exc:
        error = f"{exc.message} ({exc.code})"
    context = {"record": record, "diff": diff, "replay_error": error}
    if is_htmx(request):
        return render(request, f"{TEMPLATE}#replay", context)
    view = trace_view(record=record)
    return render(
        request,
        TEMPLATE,
        {**context, "view": view, "timings": _timings(record), "crumbs": [("Console", "/console/"), ("Replay", None)]},
    )
