"""Background tasks of the conversation graph: they take ids and call one service."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from apps.conversations import access
from apps.conversations.communities import communities_refresh, layers_needing_refresh
from apps.conversations.services import items_record_access
from apps.conversations.vectors import communities_embed
from apps.core import background


@shared_task
def refresh_communities(layer_id: int) -> bool:
    """Recompute one layer's communities if its messages changed (idempotent); the LLM, when configured,
    writes their summaries and the long messages' here, in the background."""
    return communities_refresh(layer_id=layer_id, llm_now=True) is not None


@shared_task
def sweep_communities() -> int:
    """Recompute every layer whose messages changed or got embeddings since the last run."""
    return sum(
        communities_refresh(layer_id=layer_id, llm_now=True) is not None for layer_id in layers_needing_refresh()
    )


@shared_task
def embed_communities(layer_id: int | None) -> int:
    """Embed the layer's communities still without a vector (None: every layer's; the periodic sweep)."""
    return communities_embed(layer_id=layer_id)


@shared_task
def flush_item_access() -> int:
    """Write the in-process buffer of served items (one UPDATE)."""
    counts, at = access.take_buffer()
    return items_record_access(counts=counts, at=at) if at is not None else 0


@shared_task
def record_item_access(counts: dict[str, int], at: str) -> int:
    """Celery mode: the served ids travel with the task (JSON keys are strings)."""
    return items_record_access(counts={int(k): v for k, v in counts.items()}, at=datetime.fromisoformat(at))


# In process, a layer's communities are recomputed after the embedding sweep its messages queued
# (topic communities cluster embeddings): the same background lane, in order.
background.own_lane(refresh_communities, "embedding")
background.own_lane(embed_communities, "embedding")
