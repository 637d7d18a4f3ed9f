from __future__ import annotations

from django.apps import AppConfig


class RedactionConfig(AppConfig):
    name = "apps.redaction"
    default_auto_field = "django.db.models.BigAutoField"
