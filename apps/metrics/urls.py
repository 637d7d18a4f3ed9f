from __future__ import annotations

from django.urls import path

from apps.metrics.views import metrics_view

urlpatterns = [path("", metrics_view, name="metrics")]
