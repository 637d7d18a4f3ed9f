"""`/sessions/` and `/sessions/<layer id>/`: a session's trajectory and its conversation graph."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.assembly.engine.policy import PRESETS, ZONES
from apps.layers.models import Layer
from apps.web.access import workspace_view
from apps.web.selectors.conversation_graph import RESOLUTIONS, conversation_graph
from apps.web.selectors.sessions import sessions_list
from apps.web.selectors.trajectory import session_trajectory
from apps.web.timeline import timeline
from apps.web.workspace_choice import WorkspaceAccess


@workspace_view()
def sessions(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    context = {"rows": sessions_list(workspace=access.current), "crumbs": [("Sessions", None)]}
    return render(request, "web/sessions/list.html", context)


@workspace_view()
def session(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Any layer works (a project's assemblies too); the graph is drawn when it has messages."""
    layer = Layer.objects.filter(workspace=access.current, pk=layer_id).first()
    if layer is None:
        raise Http404("No such layer in this workspace.")
    preset = request.GET.get("preset", "balanced")
    preset = preset if preset in PRESETS else "balanced"
    zone = request.GET.get("zone", "normal")
    zone = zone if zone in ZONES else "normal"
    trajectory = session_trajectory(layer=layer)
    context = {
        "layer": layer,
        "trajectory": trajectory,
        "chart": timeline(trajectory),
        "graph": conversation_graph(layer=layer, preset=preset, zone=zone),
        "presets": list(PRESETS),
        "zones": ZONES,
        "preset": preset,
        "zone": zone,
        "resolutions": RESOLUTIONS,
        "crumbs": [("Sessions", "/sessions/"), (layer.name, None)],
    }
    return render(request, "web/sessions/detail.html", context)
