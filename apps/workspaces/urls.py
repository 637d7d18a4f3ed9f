from __future__ import annotations

from django.urls import path

from apps.workspaces import api

urlpatterns = [
    path("status/", api.StatusApi.as_view(), name="api-status"),
    path("keys/", api.ApiKeyListCreateApi.as_view(), name="api-keys"),
    path("keys/<int:key_id>/revoke/", api.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
]
