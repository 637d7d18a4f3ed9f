"""A session's export (any member: a JSON download of what the pages show anyway), an import of one into a
new session, and a recompute of its communities (operators: both write).

The same doors as the API: `transfer.graph_export`, the import's shape (`conversations.graph_input`,
answered with the API's code and message) then `transfer.graph_import`, and `communities_refresh`.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from apps.conversations import transfer
from apps.conversations.communities import communities_refresh
from apps.conversations.selectors import communities_list
from apps.core.errors import DomainError, NotFound
from apps.core.field_errors import INVALID_GRAPH
from apps.core.htmx import render_page_or_partial
from apps.layers.models import Layer
from apps.layers.selectors import layer_get
from apps.web.access import workspace_view
from apps.web.forms.session_import import ImportForm
from apps.web.layer_tree import layer_rows
from apps.web.selectors.sessions import sessions_list
from apps.web.views.sessions import TEMPLATE, _messages
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role


def _layer(access: WorkspaceAccess, layer_id: int) -> Layer:
    assert access.current is not None
    try:
        return layer_get(workspace=access.current, layer_id=layer_id)
    except NotFound as exc:
        raise Http404("No such layer in this workspace.") from exc


@require_GET
@workspace_view()
def session_export(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """The session's graph as `GET /api/v1/layers/{id}/export/` gives it, as a file to keep."""
    layer = _layer(access, layer_id)
    body = json.dumps(transfer.graph_export(layer=layer), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    name = slugify(layer.external_id or layer.name) or f"layer-{layer.pk}"
    response.headers["Content-Disposition"] = f'attachment; filename="session-{name}.json"'
    return response


@require_POST
@workspace_view(Role.OPERATOR)
def session_import(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """A new session from an export; every refusal beside its field (422, nothing written)."""
    assert access.current is not None
    form = ImportForm(request.POST, request.FILES, layers=layer_rows(workspace=access.current))
    if form.is_valid():
        data = form.cleaned_data
        try:
            parent = _layer(access, data["parent"])
            layer = transfer.graph_import(
                workspace=access.current, parent=parent, graph=data["graph"], name=data["name"] or None
            )
        except DomainError as exc:  # invalid_graph, invalid_parent, a content limit
            form.add_error("graph" if exc.code == INVALID_GRAPH.code else None, exc.message)
        else:
            count = len(data["graph"]["messages"])
            messages.success(request, f"Imported {count} message{'s' if count != 1 else ''} into {layer.name}.")
            return HttpResponseRedirect(reverse("web:session", args=[layer.pk]))
    context = {"rows": sessions_list(workspace=access.current), "import_form": form, "crumbs": [("Sessions", None)]}
    return render(request, "web/sessions/list.html", context, status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def communities_recompute(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Task and topic communities computed again now (`POST /api/v1/layers/{id}/communities/`)."""
    layer = _layer(access, layer_id)
    communities_refresh(layer_id=layer.pk, force=True)
    found = list(communities_list(layer=layer))
    kinds = {kind: sum(1 for c in found if c.kind == kind) for kind in sorted({c.kind for c in found})}
    said = ", ".join(f"{n} {kind}" for kind, n in kinds.items()) or "none"
    note = f"Communities recomputed: {len(found)} ({said})."
    if not request.htmx:  # type: ignore[attr-defined]
        messages.success(request, note)
        return HttpResponseRedirect(reverse("web:session", args=[layer.pk]))
    context = {"layer": layer, "recomputed": note, **_messages(request, layer)}
    return render_page_or_partial(request, TEMPLATE, "graph", context)
