"""Every saved or deleted row that assembly reads bumps its workspace's content version.

The registry of those models (`VERSIONED`) is filled by the apps that own them, each in its
`AppConfig.ready` (`versioned(Layer, Item, ...)`), so core names no model of a higher app. Bulk
writes (which send no signals) call `content_changed` themselves: items_create and the embedder.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models.signals import post_delete, post_save

from apps.core.versions import content_changed

# The versioned models, in the order their apps registered them (read by tests and the state dump).
VERSIONED: list[type[models.Model]] = []


def _changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    workspace_id = getattr(instance, "workspace_id", None)
    if workspace_id is None and hasattr(instance, "layer"):
        workspace_id = instance.layer.workspace_id
    if workspace_id is not None:
        content_changed(workspace_id)


def versioned(*versioned_models: type[models.Model]) -> None:
    """Count every save and delete of these models (a `workspace` or `layer` field names the
    workspace) as a change of their workspace's content. Called by the owning app's `ready`; once per
    model (a second call changes nothing)."""
    for model in versioned_models:
        label = model._meta.label
        post_save.connect(_changed, sender=model, dispatch_uid=f"content-{label}-save")
        post_delete.connect(_changed, sender=model, dispatch_uid=f"content-{label}-delete")
        if model not in VERSIONED:
            VERSIONED.append(model)
