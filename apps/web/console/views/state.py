"""`/console/state/` and `/console/state/<layer id>/`: state dumps, as a page or a JSON download."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.layers.models import Layer
from apps.web.console.access import staff_view
from apps.web.console.state import layer_state, workspace_state
from apps.web.workspace_choice import WorkspaceAccess


def _download(dump: dict[str, Any], filename: str) -> HttpResponse:
    body = json.dumps(dump, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False, sort_keys=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _wants_json(request: HttpRequest) -> bool:
    return request.GET.get("format") == "json"


@staff_view
def workspace(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    dump = workspace_state(workspace=access.current)
    if _wants_json(request):
        return _download(dump, f"state-{access.current.slug}.json")
    context = {"dump": dump, "crumbs": [("Console", "/console/"), ("State", None)]}
    return render(request, "console/state_workspace.html", context)


@staff_view
def layer(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    found = Layer.objects.filter(workspace=access.current, pk=layer_id).select_related("workspace").first()
    if found is None:
        raise Http404("No such layer in this workspace.")
    dump = layer_state(layer=found)
    if _wants_json(request):
        return _download(dump, f"state-{found.workspace.slug}-layer-{found.pk}.json")
    context = {
        "dump": dump,
        "crumbs": [("Console", "/console/"), ("State", "/console/state/"), (found.name, None)],
    }
    return render(request, "console/state_layer.html", context)
