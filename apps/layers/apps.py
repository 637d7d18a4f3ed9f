from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class LayersConfig(AppConfig):
    name = "apps.layers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.workspaces.signals import workspace_created

        workspace_created.connect(_on_workspace_created, dispatch_uid="layers_company_root")


def _on_workspace_created(sender: Any, workspace: Any, **kwargs: Any) -> None:
    """Every workspace has its company root layer from its first moment (same transaction)."""
    from apps.layers.services import layer_create_root

    layer_create_root(workspace=workspace, name=workspace.name)
