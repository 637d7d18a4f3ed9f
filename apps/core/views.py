"""The pages: the workspace's layers and the context preview. Login required for all of them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.assembly.serializers import ContextOutput
from apps.assembly.services import context_assemble
from apps.core.errors import DomainError
from apps.core.forms import PreviewForm
from apps.core.htmx import render_page_or_partial
from apps.core.layer_tree import LayerRow, layer_rows
from apps.core.workspace_choice import WorkspaceChoice, workspace_choose

PREVIEW_TEMPLATE = "core/preview.html"
PREVIEW_PARTIAL = "result"


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The current workspace's layers as an indented tree with item counts."""
    choice = workspace_choose(request)
    if choice.current is None:
        return _no_workspace(request, choice)
    rows = layer_rows(workspace=choice.current)
    return render(request, "core/home.html", {**_page(choice), "rows": rows})


@login_required
@require_http_methods(["GET", "POST"])
def preview(request: HttpRequest) -> HttpResponse:
    """Assemble a context as an agent would and show it, its token bar and its chunks.

    A POST from htmx gets only the result fragment (#preview-result); a plain POST gets the page.
    Bad input and domain errors come back as form errors, never as a 500.
    """
    choice = workspace_choose(request)
    if choice.current is None:
        return _no_workspace(request, choice)
    rows = layer_rows(workspace=choice.current)
    result: dict[str, Any] | None = None
    if request.method == "POST":
        form = PreviewForm(request.POST, layers=rows)
        if form.is_valid():
            try:
                result = ContextOutput(context_assemble(workspace=choice.current, params=form.params())).data
            except DomainError as exc:
                field = "token_budget" if exc.code == "invalid_token_budget" else None
                form.add_error(field, f"{exc.message} ({exc.code})")
    else:
        form = PreviewForm(initial=_initial_layer(request, rows), layers=rows)
    context = {**_page(choice), "form": form, "result": _result_view(result, rows) if result else None}
    return render_page_or_partial(request, PREVIEW_TEMPLATE, PREVIEW_PARTIAL, context)


def _page(choice: WorkspaceChoice) -> dict[str, Any]:
    return {"workspace": choice.current, "workspaces": choice.available}


def _no_workspace(request: HttpRequest, choice: WorkspaceChoice) -> HttpResponse:
    return render(request, "core/no_workspace.html", _page(choice))


def _initial_layer(request: HttpRequest, rows: list[LayerRow]) -> dict[str, int]:
    """`?layer=<id>` preselects a layer (the home page links here that way); else the root."""
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
