"""Top-level URL map: API v1, schema and docs, pages, console, admin, metrics."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("api/v1/", include("apps.layers.urls")),
    path("api/v1/", include("apps.assembly.urls")),
    path("api/v1/", include("apps.workspaces.urls")),
    path("api/v1/", include("apps.profiles.urls")),
    path("api/v1/", include("apps.error_patterns.urls")),
    path("api/v1/", include("apps.redaction.urls")),
    path("api/v1/", include("apps.summaries.urls")),
    path("api/v1/", include("apps.conversations.urls")),
    path("api/v1/", include("apps.consumption.urls")),
    path("api/v1/", include("apps.tokens.urls")),
    path("api/v1/", include("apps.proxy.urls")),
    path("api/v1/", include("apps.erasure.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("proxy/", include("apps.proxy.proxy_urls")),
    path("metrics", include("apps.metrics.urls")),
    path("console/", include("apps.web.console.urls")),
    path("admin/", admin.site.urls),
    path("", include("apps.core.urls")),
    path("", include("apps.web.urls")),
]

handler403 = "apps.core.errorpages.permission_denied"
handler404 = "apps.core.errorpages.not_found"
handler500 = "apps.core.errorpages.server_error"
