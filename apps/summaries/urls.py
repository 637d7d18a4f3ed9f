from __future__ import annotations

from django.urls import path

from apps.summaries import api

urlpatterns = [
    path("layers/<int:layer_id>/summaries/", api.LayerSummariesApi.as_view(), name="api-layer-summaries"),
    path("layers/<int:layer_id>/summarize/", api.LayerSummarizeApi.as_view(), name="api-layer-summarize"),
    path("layers/<int:layer_id>/config/", api.LayerConfigApi.as_view(), name="api-layer-config"),
]
