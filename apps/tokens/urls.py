from __future__ import annotations

from django.urls import path

from apps.tokens import api

urlpatterns = [
    path("tokens/", api.TokensApi.as_view(), name="api-tokens"),
]
