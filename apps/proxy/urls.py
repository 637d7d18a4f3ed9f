from __future__ import annotations

from django.urls import path

from apps.proxy import api

urlpatterns = [
    path("upstreams/", api.UpstreamListApi.as_view(), name="api-upstreams"),
    path("upstreams/<str:kind>/", api.UpstreamApi.as_view(), name="api-upstream"),
    path("proxy/settings/", api.ProxySettingsApi.as_view(), name="api-proxy-settings"),
]
