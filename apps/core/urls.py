"""Sign in and out (the pages themselves live in apps.web); liveness and readiness probes."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from apps.core import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
