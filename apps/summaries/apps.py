from __future__ import annotations

from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "apps.summaries"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.core.signals import versioned
        from apps.summaries import erasure, signals, supersession_judge
        from apps.summaries.archive import register_parts
        from apps.summaries.models import LayerConfig, Summary

        versioned(LayerConfig, Summary)
        signals.connect()
        erasure.register()
        register_parts()
        supersession_judge.register()
