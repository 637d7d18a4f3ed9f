from __future__ import annotations

from django.urls import path

from apps.consumption import api

urlpatterns = [
    path("consumption/", api.ConsumptionApi.as_view(), name="api-consumption"),
    path("strategies/", api.StrategyListCreateApi.as_view(), name="api-strategies"),
    path("strategies/<int:strategy_id>/feedback/", api.StrategyFeedbackApi.as_view(), name="api-strategy-feedback"),
    path("stats/", api.StatsApi.as_view(), name="api-stats"),
]
