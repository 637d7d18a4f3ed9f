"""`/console/state/` and `/console/state/<layer id>/`: state dumps, as a page or a JSON download."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.core.errors import NotFound
from apps.layers.selectors import layer_get
from apps.web.console.access import developer_view
from apps.web.console.state import layer_state, workspace_state
from apps.web.workspace_choice import WorkspaceAccess


def _download(dump: dict[str, Any], filename: str) -> HttpResponse:
    body = json.dumps(dump, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False, sort_keys=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _installation(request: HttpRequest) -> bool:
    """Superusers run the installation: only they see the schedule's errors, which span every workspace."""
    return bool(getattr(request.user, "is_superuser", False))


def _wants_json(request: HttpRequest) -> bool:
    return request.GET.get("format") == "json"


@developer_view
def workspace(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    dump = workspace_state(workspace=access.current, installation=_installation(request))
    if _wants_json(request):
        return _download(dump, f"state-{access.current.slug}.json")
    context = {"dump": dump, "crumbs": [("Console", "/console/"), ("State", None)]}
    return render(request, "console/state_workspace.html", context)


@developer_view
def layer(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    assert access.current is not None
    try:
        found = layer_get(workspace=access.current, layer_id=layer_id)
    except NotFound as exc:
        raise Http404("No such layer in this workspace.") from exc
    found.workspace = access.current  # the one it was found in: no query for it
    dump = layer_state(layer=found, installation=_installation(request))
    if _wants_json(request):
        return _download(dump, f"state-{found.workspace.slug}-layer-{found.pk}.json")
    context = {
        "dump": dump,
        "crumbs": [("Console", "/console/"), ("State", "/console/state/"), (found.name, None)],
    }
    return render(request, "console/state_layer.html", context)
