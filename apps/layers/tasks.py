"""Celery tasks of the layers app: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from apps.core import background
from apps.core.embeddings import EmbeddingError
from apps.layers.embedder import items_embed_pending
from apps.layers.embedding_space import space_sync_once
from apps.layers.retention import items_expire


@shared_task(autoretry_for=(EmbeddingError,), retry_backoff=2, retry_jitter=True, max_retries=5)
def embed_pending_items(workspace_id: int | None) -> int:
    """Embed every item still without an embedding (idempotent): of one workspace, or with None of
    all of them in fair batches (what writes dispatch, so one bulk never delays another workspace)."""
    space_sync_once()  # a model change not recorded at start (the database did not answer then)
    return items_embed_pending(workspace_id=workspace_id, runners=settings.EMBEDDING_CONCURRENCY)


# In process, a bulk load's embedding (minutes) runs beside the other background work, not before it.
background.own_lane(embed_pending_items, "embedding")


@shared_task
def clear_other_model_vectors() -> int:
    """After an embedding model change: clear the other model's vectors (batches by id), then embed."""
    from apps.core import background
    from apps.layers.embedding_space import vectors_clear_other_models

    cleared = vectors_clear_other_models()
    if cleared:
        background.dispatch(embed_pending_items, None)
    return cleared


@shared_task(ignore_result=True)
def expire_items() -> int:
    """Delete items past their workspace's retention (closed sessions' messages, TTLs by layer kind)."""
    return items_expire()
