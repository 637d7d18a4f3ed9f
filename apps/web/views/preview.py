"""`/preview/`: assemble a context as an agent would and show every part of the answer.

The request lives in the URL (a GET form): a reload or a shared link shows the same preview, and
a what-if row is a link to the same request at another budget. HTMX swaps only #preview-result
(and pushes the URL); the Cancel button aborts that request, and the server, seeing its client
gone (apps/core/client_gone.py), stops the assembly at its next stage and records nothing (499).
Bad input and domain errors are form errors, never a 500. Any member may preview: it reads, and
the record it leaves is the same an agent's request would.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.models import RecordOrigin
from apps.assembly.services import context_preview
from apps.core.client_gone import CLIENT_CLOSED_REQUEST, client_gone
from apps.core.errors import DomainError
from apps.core.htmx import render_page_or_partial
from apps.web.access import workspace_view
from apps.web.forms.preview import PreviewForm
from apps.web.layer_tree import LayerRow, layer_rows
from apps.web.preview_result import PreviewView, preview_view
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Workspace

PREVIEW_TEMPLATE = "web/preview/page.html"
PREVIEW_PARTIAL = "result"


@require_GET
@workspace_view()
def preview(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    workspace = access.current
    assert workspace is not None
    rows = layer_rows(workspace=workspace)
    view: PreviewView | None = None
    if "query" in request.GET:  # the form was sent (its query may be empty); `?layer=` alone preselects
        try:
            form, view = preview_assemble(request, workspace=workspace, rows=rows)
        except AssemblyCancelled:
            return HttpResponse(status=CLIENT_CLOSED_REQUEST)
    else:
        form = PreviewForm(initial=_initial_layer(request, rows), workspace=workspace, layers=rows)
    context = {"form": form, "view": view, "crumbs": [("Preview", None)]}
    return render_page_or_partial(request, PREVIEW_TEMPLATE, PREVIEW_PARTIAL, context)


def preview_assemble(
    request: HttpRequest, *, workspace: Workspace, rows: list[LayerRow]
) -> tuple[PreviewForm, PreviewView | None]:
    """The request's query string (the preview's form) assembled as a page run: the form, with any
    error on it, and the view of the answer (None when the form or the service refused it). Raises
    AssemblyCancelled when the client left (its caller answers 499)."""
    form = PreviewForm(request.GET, workspace=workspace, layers=rows)
    params = form.params() if form.is_valid() else None
    if params is None:
        return form, None
    try:
        answer = context_preview(
            workspace=workspace, params=params, cancelled=client_gone(request), origin=RecordOrigin.PAGE
        )
    except DomainError as exc:  # e.g. a budget out of range: resolve.py is the one check
        field = {"invalid_token_budget": "token_budget", "unknown_template": "template"}.get(exc.code)
        form.add_error(field, f"{exc.message} ({exc.code})")
        return form, None
    labels = {row.id: f"{row.kind_label}: {row.name}" for row in rows}
    profile = form.cleaned_data.get("profile") or ""
    view = preview_view(
        workspace_id=workspace.pk, preview=answer, query=request.GET, layer_labels=labels, profile=profile
    )
    return form, view


def _initial_layer(request: HttpRequest, rows: list[LayerRow]) -> dict[str, int]:
    """`?layer=<id>` alone preselects a layer without running (links from other pages); else the root."""
    wanted = request.GET.get("layer", "")
    ids = [row.id for row in rows]
    if wanted.isdigit() and int(wanted) in ids:
        return {"layer": int(wanted)}
    return {"layer": ids[0]} if ids else {}
