from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class LayersConfig(AppConfig):
    name = "apps.layers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.workspaces.signals import status_read, workspace_created

        workspace_created.connect(_on_workspace_created, dispatch_uid="layers_company_root")
        status_read.connect(_on_status_read, dispatch_uid="layers_status")


def _on_workspace_created(sender: Any, workspace: Any, **kwargs: Any) -> None:
    """Every workspace has its company root layer from its first moment (same transaction)."""
    from apps.layers.services import layer_create_root

    layer_create_root(workspace=workspace, name=workspace.name)


def _on_status_read(sender: Any, workspace: Any, **kwargs: Any) -> dict[str, Any]:
    """The workspace status's items, embedding backlog, background queue and providers."""
    from apps.layers.selectors import workspace_items_status

    return workspace_items_status(workspace=workspace)
