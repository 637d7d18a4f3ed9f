from __future__ import annotations

from django.apps import AppConfig


class BenchConfig(AppConfig):
    """No models: the benchmark and evaluation commands, installed so `manage.py` finds them."""

    name = "apps.bench"
    default_auto_field = "django.db.models.BigAutoField"
