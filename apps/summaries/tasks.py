"""Celery tasks of the summaries app: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from apps.core import background
from apps.layers.selectors import layer_find
from apps.summaries import services
from apps.summaries.vectors import summaries_embed


@shared_task
def summarize_layer_if_due(layer_id: int) -> str:
    """Change trigger (dispatched after the commit of item writes): summarize if still due."""
    layer = layer_find(layer_id=layer_id)
    if layer is None:
        return "gone"
    result = services.layer_summarize_if_due(layer=layer)
    return result.status if result else "not_due"


@shared_task
def summarize_layer_now(layer_id: int) -> str:
    """Summarize now whatever the triggers say (an emptied child's summaries were just cleared)."""
    layer = layer_find(layer_id=layer_id)
    if layer is None:
        return "gone"
    return services.layer_summarize(layer=layer, force=True, trigger="child_emptied").status


@shared_task
def summarize_due_layers(workspace_id: int | None) -> int:
    """Time trigger (Celery beat, every minute): every layer whose interval or change count is due."""
    return len(services.summarize_due_layers(workspace_id=workspace_id))


@shared_task
def summarize_layer_job(layer_id: int) -> str:
    """A summarize request's background run while the LLM fails (apps/summaries/jobs.py)."""
    from apps.summaries.jobs import layer_summarize_job

    return layer_summarize_job(layer_id=layer_id)


@shared_task
def embed_summaries(layer_id: int | None) -> int:
    """Embed the layer's summaries still without a vector (None: every layer's; the periodic sweep)."""
    return summaries_embed(layer_id=layer_id)


# In process, behind the item embedding its layer's writes queued (the same model, one lane).
background.own_lane(embed_summaries, "embedding")
