"""`/sessions/` and `/sessions/<layer id>/`: a session's trajectory, its assemblies, what was in context at
each, its conversation graph and its messages, each region paged on its own.

One view for the page and its regions: an htmx request names its target (`HX-Target`) and gets that
region alone, computed alone; every link also works as a plain page link (`{% querystring %}` keeps
the other regions' parameters).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.core.errors import NotFound
from apps.core.htmx import is_htmx, render_page_or_partial
from apps.engine.policy import PRESETS, ZONES
from apps.layers.models import Layer
from apps.layers.selectors import layer_get
from apps.web.access import workspace_view
from apps.web.forms.session_import import ImportForm
from apps.web.layer_tree import layer_rows
from apps.web.selectors.conversation_graph import RESOLUTIONS, conversation_graph, messages_page
from apps.web.selectors.sessions import sessions_list
from apps.web.selectors.trajectory import session_trajectory
from apps.web.timeline import timeline
from apps.web.workspace_choice import WorkspaceAccess

TEMPLATE = "web/sessions/detail.html"
SPANS = (25, 50, 100, 200)  # the chart's zoom: assemblies in its window
DEFAULT_SPAN = 50
ASSEMBLIES_PER_PAGE = 10
REGIONS = ("trajectory", "assemblies", "turn-context", "graph", "messages")


@workspace_view(replica=True)
def sessions(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    form = ImportForm(layers=layer_rows(workspace=access.current)) if access.can_edit else None
    context = {"rows": sessions_list(workspace=access.current), "import_form": form, "crumbs": [("Sessions", None)]}
    return render(request, "web/sessions/list.html", context)


def _number(request: HttpRequest, name: str, default: int | None) -> int | None:
    try:
        return int(request.GET[name])
    except (KeyError, ValueError):
        return default


@workspace_view(replica=True)
def session(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Any layer works (a project's assemblies too); the graph is drawn when it has messages."""
    assert access.current is not None
    try:
        layer = layer_get(workspace=access.current, layer_id=layer_id)
    except NotFound as exc:
        raise Http404("No such layer in this workspace.") from exc
    target = request.headers.get("HX-Target", "") if is_htmx(request) else ""
    region = target if target in REGIONS else ""
    context: dict[str, Any] = {"layer": layer, "crumbs": [("Sessions", "/sessions/"), (layer.name, None)]}
    if region in ("", "trajectory", "assemblies", "turn-context"):
        context.update(_assemblies(request, layer, region))
    if region in ("", "graph", "messages"):
        context.update(_messages(request, layer))
    partial = {"turn-context": "turn_context"}.get(region, region or "trajectory")
    return render_page_or_partial(request, TEMPLATE, partial, context)


def _assemblies(request: HttpRequest, layer: Layer, region: str) -> dict[str, Any]:
    """The chart's window (`span` turns ending at `end`), a page of the assemblies table (`apage`,
    newest first) and the turn whose context is open (`turn`)."""
    span = _number(request, "span", DEFAULT_SPAN) or DEFAULT_SPAN
    span = span if span in SPANS else DEFAULT_SPAN
    # Page runs (previews, compares, replays on this session) only when asked: `?page_runs=1`.
    runs = request.GET.get("page_runs") == "1"
    context: dict[str, Any] = {"span": span, "spans": SPANS, "page_runs": runs}
    if region in ("", "trajectory"):
        window = session_trajectory(layer=layer, end=_number(request, "end", None), span=span, page_runs=runs)
        context.update(trajectory=window, chart=timeline(window), total_assemblies=window.total)
        total = window.total
    if region in ("", "assemblies"):
        first = session_trajectory(layer=layer, span=1, page_runs=runs) if region else window
        total = first.total
        pages = max((total + ASSEMBLIES_PER_PAGE - 1) // ASSEMBLIES_PER_PAGE, 1)
        apage = min(max(_number(request, "apage", 1) or 1, 1), pages)
        end = total - (apage - 1) * ASSEMBLIES_PER_PAGE
        listed = session_trajectory(layer=layer, end=end, span=ASSEMBLIES_PER_PAGE, page_runs=runs)
        context.update(
            listed=list(reversed(listed.turns)) if total else [],
            apage=apage,
            apages=pages,
            total_assemblies=total,
        )
    if region in ("", "turn-context"):
        number = _number(request, "turn", None)
        opened = (
            session_trajectory(layer=layer, end=number, span=1, label_included=True, page_runs=runs) if number else None
        )
        turn = opened.turns[0] if opened and opened.turns else None
        context["opened"] = turn
        context["opened_included"] = sorted(opened.labels[key] for key in turn.included) if opened and turn else []
    return context


def _messages(request: HttpRequest, layer: Layer) -> dict[str, Any]:
    preset = request.GET.get("preset", "balanced")
    preset = preset if preset in PRESETS else "balanced"
    zone = request.GET.get("zone", "normal")
    zone = zone if zone in ZONES else "normal"
    graph = conversation_graph(layer=layer, preset=preset, zone=zone)
    q = request.GET.get("q", "")[:200]
    shown, matches, page, pages = messages_page(graph=graph, q=q, page=_number(request, "page", 1) or 1)
    return {
        "graph": graph,
        "presets": list(PRESETS),
        "zones": ZONES,
        "preset": preset,
        "zone": zone,
        "resolutions": RESOLUTIONS,
        "q": q,
        "shown": shown,
        "matches": matches,
        "page": page,
        "pages": pages,
    }
