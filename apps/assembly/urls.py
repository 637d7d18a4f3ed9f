from __future__ import annotations

from django.urls import path, re_path

from apps.assembly import api, api_stream, history_api, templates_api

urlpatterns = [
    path("context/", api.ContextApi.as_view(), name="api-context"),
    path("context/preview/", api.ContextPreviewApi.as_view(), name="api-context-preview"),
    re_path(r"^context/stream/?$", api_stream.ContextStreamApi.as_view(), name="api-context-stream"),
    path("traces/<str:trace_id>/", api.TraceApi.as_view(), name="api-trace"),
    path("templates/", templates_api.TemplateListCreateApi.as_view(), name="api-templates"),
    path("templates/<str:name>/", templates_api.TemplateDetailApi.as_view(), name="api-template"),
    path("history/", history_api.HistoryApi.as_view(), name="api-history"),
]
