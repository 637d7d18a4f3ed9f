"""Developer console pages, mounted at /console/ (developers and admins of the current workspace)."""

from __future__ import annotations

from django.urls import path

from apps.web.console.views import records, state, traces

app_name = "console"
urlpatterns = [
    path("", records.records, name="records"),
    path("traces/<uuid:trace_id>/", traces.trace, name="trace"),
    path("traces/<uuid:trace_id>/replay/", traces.replay, name="replay"),
    path("traces/<uuid:trace_id>/note/", traces.note_save, name="trace-note"),
    path("traces/<uuid:trace_id>/why-not/<str:source>/<int:key>/", traces.why_not_view, name="why-not"),
    path("traces/<uuid:trace_id>/pin/<int:key>/", traces.pin, name="pin"),
    path("state/", state.workspace, name="state"),
    path("state/<int:layer_id>/", state.layer, name="state-layer"),
]
