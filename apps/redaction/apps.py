from __future__ import annotations

from django.apps import AppConfig


class RedactionConfig(AppConfig):
    name = "apps.redaction"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.redaction.archive import register_parts

        register_parts()
