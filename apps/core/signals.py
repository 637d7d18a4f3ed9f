"""Every saved or deleted row that assembly reads bumps its workspace's content version.

Bulk writes (which send no signals) call `content_changed` themselves: items_create and the
embedder.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from apps.core.versions import content_changed

WATCHED = (
    "layers.Layer",
    "layers.LayerConfig",
    "layers.Item",
    "layers.Relationship",
    "summaries.Summary",
    "error_patterns.ErrorPattern",
    "profiles.AgentProfile",
    "assembly.OutputTemplate",
)


def _changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    workspace_id = getattr(instance, "workspace_id", None)
    if workspace_id is None and hasattr(instance, "layer"):
        workspace_id = instance.layer.workspace_id
    if workspace_id is not None:
        content_changed(workspace_id)


def connect() -> None:
    from django.apps import apps

    for label in WATCHED:
        model = apps.get_model(label)
        post_save.connect(_changed, sender=model, dispatch_uid=f"content-{label}-save")
        post_delete.connect(_changed, sender=model, dispatch_uid=f"content-{label}-delete")
