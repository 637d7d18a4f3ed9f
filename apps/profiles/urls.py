from __future__ import annotations

from django.urls import path

from apps.profiles import api

urlpatterns = [
    path("profiles/", api.ProfileListCreateApi.as_view(), name="api-profiles"),
    path("profiles/<str:name>/", api.ProfileDetailApi.as_view(), name="api-profile"),
]
