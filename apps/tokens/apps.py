from __future__ import annotations

from django.apps import AppConfig


class TokensConfig(AppConfig):
    name = "apps.tokens"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.tokens.archive import register_parts

        register_parts()
