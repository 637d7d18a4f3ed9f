"""Developer console pages, mounted at /console/."""

from __future__ import annotations

from django.urls import path

from apps.console import views

app_name = "console"
urlpatterns = [
    path("", views.records, name="records"),
    path("traces/<uuid:trace_id>/", views.trace, name="trace"),
]
