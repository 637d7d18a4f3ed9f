"""The developer console: recent context assemblies and their decision traces. Staff only."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.console.selectors import assembly_record_get, assembly_records_recent
from apps.workspaces.selectors import workspaces_for_user

View = Callable[..., HttpResponse]


def staff_required(view: View) -> View:
    """Anonymous users go to the login page; signed-in non-staff users get 403."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied("The console is for staff.")
        return view(request, *args, **kwargs)

    return wrapped


@staff_required
def records(request: HttpRequest) -> HttpResponse:
    """The newest assemblies across the workspaces the user can see."""
    workspaces = workspaces_for_user(user=request.user)
    rows = assembly_records_recent(workspaces=workspaces)
    return render(request, "console/records.html", {"records": rows, "console_workspaces": workspaces})


@staff_required
def trace(request: HttpRequest, trace_id: uuid.UUID) -> HttpResponse:
    """One assembly: its request, its figures and its decision trace, pretty-printed."""
    record = assembly_record_get(workspaces=workspaces_for_user(user=request.user), trace_id=trace_id)
    if record is None:
        raise Http404("No such trace.")
    context = {
        "record": record,
        "request_json": json.dumps(record.request, indent=2, sort_keys=True, ensure_ascii=False),
        "trace_json": json.dumps(record.trace, indent=2, ensure_ascii=False),
    }
    return render(request, "console/trace.html", context)
