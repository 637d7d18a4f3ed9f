from __future__ import annotations

from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "apps.summaries"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.summaries import signals

        signals.connect()
