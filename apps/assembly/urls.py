from __future__ import annotations

from django.urls import path

from apps.assembly import api

urlpatterns = [
    path("context/", api.ContextApi.as_view(), name="api-context"),
    path("context/preview/", api.ContextPreviewApi.as_view(), name="api-context-preview"),
    path("traces/<str:trace_id>/", api.TraceApi.as_view(), name="api-trace"),
]
