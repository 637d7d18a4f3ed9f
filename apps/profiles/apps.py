from __future__ import annotations

from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "apps.profiles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.profiles.archive import register_parts

        register_parts()
        from apps.core.signals import versioned
        from apps.profiles.models import AgentProfile

        versioned(AgentProfile)
