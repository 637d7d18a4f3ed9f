"""Pages: sign in and out, the layers home page and the context preview."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from apps.core import views

urlpatterns = [
    path("", views.home, name="home"),
    path("preview/", views.preview, name="preview"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
