from __future__ import annotations

from django.apps import AppConfig


class AssemblyConfig(AppConfig):
    name = "apps.assembly"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.assembly import erasure
        from apps.assembly.archive import register_parts
        from apps.assembly.models import OutputTemplate
        from apps.core.signals import versioned

        versioned(OutputTemplate)
        erasure.register()
        register_parts()
