from __future__ import annotations

from django.apps import AppConfig


class ErrorPatternsConfig(AppConfig):
    name = "apps.error_patterns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.error_patterns.archive import register_parts

        register_parts()
        from apps.core.signals import versioned
        from apps.error_patterns import erasure
        from apps.error_patterns.models import ErrorPattern

        versioned(ErrorPattern)
        erasure.register()
