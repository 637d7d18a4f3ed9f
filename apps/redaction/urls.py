from __future__ import annotations

from django.urls import path

from apps.redaction import api

urlpatterns = [
    path("redact/", api.RedactApi.as_view(), name="api-redact"),
    path("redaction/allowlist/", api.AllowlistApi.as_view(), name="api-redaction-allowlist"),
    path("redaction/allowlist/<int:entry_id>/", api.AllowlistEntryApi.as_view(), name="api-redaction-allowlist-entry"),
]
