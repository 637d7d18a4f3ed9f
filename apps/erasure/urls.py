from __future__ import annotations

from django.urls import path

from apps.erasure import api

urlpatterns = [
    path("erasure/", api.ErasureListCreateApi.as_view(), name="api-erasure"),
    path("erasure/<int:erasure_id>/", api.ErasureDetailApi.as_view(), name="api-erasure-detail"),
]
