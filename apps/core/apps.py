from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.core import lookups, periodic_runs, signals

        signals.connect()
        periodic_runs.connect_celery()
        assert lookups.AnyOf.lookup_name == "any"  # registered on import
