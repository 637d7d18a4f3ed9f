"""Celery tasks of the summaries app: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from apps.layers.models import Layer
from apps.summaries import services


@shared_task
def summarize_layer_if_due(layer_id: int) -> str:
    """Change trigger (dispatched after the commit of item writes): summarize if still due."""
    layer = Layer.objects.filter(pk=layer_id).first()
    if layer is None:
        return "gone"
    result = services.layer_summarize_if_due(layer=layer)
    return result.status if result else "not_due"


@shared_task
def summarize_due_layers(workspace_id: int | None) -> int:
    """Time trigger (Celery beat, every minute): every layer whose interval or change count is due."""
    return len(services.summarize_due_layers(workspace_id=workspace_id))
