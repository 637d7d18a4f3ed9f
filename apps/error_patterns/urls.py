from __future__ import annotations

from django.urls import path

from apps.error_patterns import api

urlpatterns = [
    path("attempts/", api.AttemptListCreateApi.as_view(), name="api-attempts"),
    path("error-patterns/", api.PatternListApi.as_view(), name="api-error-patterns"),
    path("error-patterns/match/", api.PatternMatchApi.as_view(), name="api-error-patterns-match"),
    path("error-patterns/<int:pattern_id>/", api.PatternDetailApi.as_view(), name="api-error-pattern"),
]
