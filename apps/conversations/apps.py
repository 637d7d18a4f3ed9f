from __future__ import annotations

from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    """The conversation graph: branches, communities, history tool, export/import."""

    name = "apps.conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.conversations import erasure, hooks
        from apps.conversations.archive import register_parts

        hooks.connect()
        erasure.register()
        register_parts()
