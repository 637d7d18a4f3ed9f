"""Celery tasks of the layers app: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from apps.core.embeddings import EmbeddingError
from apps.layers.embedder import items_embed_pending


@shared_task(autoretry_for=(EmbeddingError,), retry_backoff=2, retry_jitter=True, max_retries=5)
def embed_pending_items(workspace_id: int | None) -> int:
    """Embed every item still without an embedding (idempotent): of one workspace, or with None of
    all of them in fair batches (what writes dispatch, so one bulk never delays another workspace)."""
    return items_embed_pending(workspace_id=workspace_id)
