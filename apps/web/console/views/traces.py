"""`/console/traces/<id>/`: one assembly made readable: every candidate explained and filterable, its
replay, and per candidate "why not?" (packed again with it pinned) and a pin. Developers and admins."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.assembly.models import AssemblyRecord
from apps.assembly.selectors import assembly_record_get
from apps.assembly.timings import STAGES
from apps.core.errors import DomainError
from apps.core.htmx import is_htmx
from apps.layers.selectors import item_get
from apps.layers.services import item_update
from apps.web.console.access import developer_view
from apps.web.console.replay import ReplayDiff, record_replay
from apps.web.console.traces import DECISIONS, TraceFilters, trace_view
from apps.web.console.why_not import WhyNot, why_not
from apps.web.forms.trace_note import NoteForm
from apps.web.models import TraceNote
from apps.web.trace_notes import trace_note_get, trace_note_save
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
    record = assembly_record_get(workspace_id=access.current.pk, trace_id=trace_id)
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


def _page(request: HttpRequest, record: AssemblyRecord, extra: dict[str, Any], crumb: str = "") -> HttpResponse:
    """The whole trace page, its candidates filtered by the query string, with `extra` (replay, why not)."""
    view = trace_view(record=record)
    filters = TraceFilters.of(request.GET)
    note = trace_note_get(workspace=record.workspace, trace_id=record.trace_id)
    context = {
        "trace_note": note,
        "note_form": _note_form(note),
        "view": view,
        "record": record,
        "filters": filters,
        "shown": view.shown(filters),
        "decisions": DECISIONS,
        "timings": _timings(record),
        "crumbs": [("Console", "/console/"), (crumb or f"Trace {str(record.trace_id)[:8]}", None)],
        **extra,
    }
    if is_htmx(request) and request.headers.get("HX-Target") == "candidate-rows":
        return render(request, f"{TEMPLATE}#candidate_rows", context)
    return render(request, TEMPLATE, context)


@developer_view
def trace(request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID) -> HttpResponse:
    """The record's figures, request and context, stage timings, warnings and every candidate explained;
    HTMX asking for #candidate-rows (the filters) gets only the rows."""
    return _page(request, _record(access, trace_id), {})


def _note_form(note: TraceNote | None, data: Any = None) -> NoteForm:
    initial = {"tags": " ".join(note.tags), "note": note.note} if note else {}
    return NoteForm(data, initial=initial)


@require_POST
@developer_view
def note_save(request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID) -> HttpResponse:
    """Keep the trace's tags and note (#trace-note); every error beside its field (422, nothing kept)."""
    assert access.current is not None
    record = _record(access, trace_id)
    form = _note_form(None, request.POST)
    status = 422
    saved = False
    note = None
    if form.is_valid():
        note = trace_note_save(
            workspace=access.current,
            trace_id=record.trace_id,
            tags=form.cleaned_data["tags"],
            note=form.cleaned_data["note"],
            user=request.user,
        )
        form, status, saved = _note_form(note), 200, True
    else:
        note = trace_note_get(workspace=access.current, trace_id=record.trace_id)
    context = {"record": record, "note_form": form, "trace_note": note, "note_saved": saved}
    if not is_htmx(request):
        if status == 422:
            return _page(request, record, context)
        return HttpResponseRedirect(reverse("console:trace", args=[record.trace_id]))
    return render(request, f"{TEMPLATE}#note", context, status=status)


@require_POST
@developer_view
def why_not_view(
    request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID, source: str, key: int
) -> HttpResponse:
    """The recorded request packed now with this candidate pinned: what it would displace (#why-not)."""
    record = _record(access, trace_id)
    answer: WhyNot | None = None
    error = ""
    try:
        answer = why_not(record=record, source=source, candidate_id=key)
    except DomainError as exc:
        error = f"{exc.message} ({exc.code})"
    context = {"record": record, "why": answer, "why_error": error, "asked": (source, key)}
    if not is_htmx(request):
        return _page(request, record, context)
    return render(request, f"{TEMPLATE}#why_not", context)


@require_POST
@developer_view
def pin(request: HttpRequest, access: WorkspaceAccess, trace_id: uuid.UUID, key: int) -> HttpResponse:
    """Pin the item (it goes first in every context of its layers from now on); #why-not says so."""
    record = _record(access, trace_id)
    assert access.current is not None
    error = ""
    item = None
    try:
        item = item_get(workspace=access.current, item_id=key)
        item_update(item=item, changes={"pinned": True})
    except DomainError as exc:
        error = f"{exc.message} ({exc.code})"
    context = {"record": record, "pinned_item": item if not error else None, "why_error": error, "asked": ("item", key)}
    if not is_htmx(request):
        return _page(request, record, context)
    return render(request, f"{TEMPLATE}#why_not", context)


@require_POST
@developer_view
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
    return _page(request, record, context, crumb="Replay")
