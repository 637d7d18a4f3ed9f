"""The dashboard of the current workspace."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.web.access import workspace_view
from apps.web.charts import Chart, Series
from apps.web.selectors.overview import workspace_overview
from apps.web.workspace_choice import WorkspaceAccess


@workspace_view()
def dashboard(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The workspace at a glance: its content, its embedding backlog and its recent assemblies."""
    assert access.current is not None
    overview = workspace_overview(workspace=access.current)
    hourly = Chart(
        id="assemblies-hourly",
        title="Assemblies per hour, last 24 hours",
        x=[int(hour.timestamp()) for hour, _ in overview.hourly],
        series=[Series(label="Assemblies", values=[float(n) for _, n in overview.hourly])],
        kind="bars",
    )
    context = {"overview": overview, "hourly": hourly, "crumbs": [("Dashboard", None)]}
    return render(request, "web/dashboard/page.html", context)
