"""The context preview: assemble a context as an agent would and show it, its token bar and its chunks."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods

from apps.assembly.serializers import ContextOutput
from apps.assembly.services import context_assemble
from apps.core.errors import DomainError
from apps.core.htmx import render_page_or_partial
from apps.web.access import workspace_view
from apps.web.forms.preview import PreviewForm
from apps.web.layer_tree import LayerRow, layer_rows
from apps.web.workspace_choice import WorkspaceAccess

PREVIEW_TEMPLATE = "web/preview/page.html"
PREVIEW_PARTIAL = "result"


@require_http_methods(["GET", "POST"])
@workspace_view()
def preview(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """A POST from htmx gets only the result fragment (#preview-result); a plain POST gets the page.

    Bad input and domain errors come back as form errors, never as a 500. Any member may preview:
    it reads, and the record it leaves is the same an agent's request would.
    """
    assert access.current is not None
    rows = layer_rows(workspace=access.current)
    result: dict[str, Any] | None = None
    if request.method == "POST":
        form = PreviewForm(request.POST, layers=rows)
        if form.is_valid():
            try:
                result = ContextOutput(context_assemble(workspace=access.current, params=form.params())).data
            except DomainError as exc:
                field = "token_budget" if exc.code == "invalid_token_budget" else None
                form.add_error(field, f"{exc.message} ({exc.code})")
    else:
        form = PreviewForm(initial=_initial_layer(request, rows), layers=rows)
    context = {
        "form": form,
        "result": _result_view(result, rows) if result else None,
        "crumbs": [("Preview", None)],
    }
    return render_page_or_partial(request, PREVIEW_TEMPLATE, PREVIEW_PARTIAL, context)


def _initial_layer(request: HttpRequest, rows: list[LayerRow]) -> dict[str, int]:
    """`?layer=<id>` preselects a layer (the layers pages link here that way); else the root."""
    wanted = request.GET.get("layer", "")
    ids = [row.id for row in rows]
    if wanted.isdigit() and int(wanted) in ids:
        return {"layer": int(wanted)}
    return {"layer": ids[0]} if ids else {}


def _result_view(result: dict[str, Any], rows: list[LayerRow]) -> dict[str, Any]:
    """The service's answer plus what the template cannot compute: bar width and layer names."""
    names = {row.id: f"{row.kind_label}: {row.name}" for row in rows}
    budget = int(result.get("token_budget") or 0)
    used = int(result.get("total_tokens") or 0)
    percent = min(100.0, 100.0 * used / budget) if budget else 0.0
    chunks = [
        {**chunk, "layer_label": names.get(chunk.get("layer")) or chunk.get("layer_name") or chunk.get("layer")}
        for chunk in result["chunks"]
    ]
    return {**result, "chunks": chunks, "used_percent": f"{percent:.1f}"}
