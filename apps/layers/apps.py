from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class LayersConfig(AppConfig):
    name = "apps.layers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.core.health import READINESS_CHECKS
        from apps.core.signals import versioned
        from apps.layers import erasure
        from apps.layers.archive import register_parts
        from apps.layers.models import Item, Layer, LayerKind, Relationship
        from apps.workspaces.retention import layer_kinds_register
        from apps.workspaces.signals import status_read, workspace_created

        versioned(Layer, Item, Relationship)
        erasure.register()
        register_parts()
        layer_kinds_register(LayerKind.values)  # the settings API checks layer_kind_ttl_days against them

        workspace_created.connect(_on_workspace_created, dispatch_uid="layers_company_root")
        status_read.connect(_on_status_read, dispatch_uid="layers_status")
        READINESS_CHECKS["embedding_space"] = _embedding_space_ready


def _on_workspace_created(sender: Any, workspace: Any, **kwargs: Any) -> None:
    """Every workspace has its company root layer from its first moment (same transaction)."""
    from apps.layers.services import layer_create_root

    layer_create_root(workspace=workspace, name=workspace.name)


def _on_status_read(sender: Any, workspace: Any, **kwargs: Any) -> dict[str, Any]:
    """The workspace status's items, embedding backlog, background queue and providers."""
    from apps.layers.selectors import workspace_items_status

    return workspace_items_status(workspace=workspace)


def _embedding_space_ready() -> Any:
    """/readyz: the embedding configuration against the stored vectors (fatal on a size mismatch)."""
    from apps.core.health import Readiness
    from apps.layers.embedding_space import space_problems, space_state

    problems = space_problems()
    if problems:
        return Readiness(ok=False, error="; ".join(problems), fatal=True)
    state = space_state()
    if state.reembedding:
        return Readiness(
            ok=False,
            error=(
                f"re-embedding after the model change from {state.previous_label} to {state.label}: items not "
                "re-embedded yet are found by keyword search only (GET /api/v1/status/ shows the backlog); to go "
                f"back, set EMBEDDING_PROVIDER and EMBEDDING_MODEL to {state.previous_label}"
            ),
        )
    return Readiness(ok=True)
