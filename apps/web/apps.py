"""Context Architect app: web (the pages: dashboard, layers, profiles, preview, patterns)."""

from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "apps.web"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.web import trace_notes

        trace_notes.register()  # an erasure rewrites the notes that hold its text
