"""Developer console pages, mounted at /console/ (staff only)."""

from __future__ import annotations

from django.urls import path

from apps.web.console.views import records, state, traces

app_name = "console"
urlpatterns = [
    path("", records.records, name="records"),
    path("traces/<uuid:trace_id>/", traces.trace, name="trace"),
    path("traces/<uuid:trace_id>/replay/", traces.replay, name="replay"),
    path("state/", state.workspace, name="state"),
    path("state/<int:layer_id>/", state.layer, name="state-layer"),
]
