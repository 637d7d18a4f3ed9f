from __future__ import annotations

from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "apps.experiments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.experiments import erasure
        from apps.experiments.archive import register_parts

        erasure.register()
        register_parts()
