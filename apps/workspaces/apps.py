from __future__ import annotations

from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "apps.workspaces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.workspaces import schema  # noqa: F401 - registers the OpenAPI auth extension
