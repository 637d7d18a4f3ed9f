from __future__ import annotations

from django.apps import AppConfig


class ErrorPatternsConfig(AppConfig):
    name = "apps.error_patterns"
    default_auto_field = "django.db.models.BigAutoField"
