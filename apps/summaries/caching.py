"""Summaries in the cache (Redis with REDIS_URL): PostgreSQL is the truth, the cache a TTL'd copy.

One entry per (layer, reader): the list of its summary rows, [] when it has none (so a layer
without summaries costs no query either). Every write to Summary refreshes its entry from
PostgreSQL (signals.py), now and again after commit; a cache outage reads as a miss.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.core import cache
from apps.summaries.models import Summary

FIELDS = (
    "layer_id",
    "depth",
    "text",
    "token_count",
    "source_hash",
    "generated_at",
    "provider",
    "stale",
    "personalized_for_id",
    "personalization_ref",
    "embedding",  # float32 bytes (apps/summaries/vectors.py), None until embedded
    "embedding_model",
)


def key(layer_id: int, user_id: int | None) -> str:
    return f"summaries:v2:{layer_id}:{user_id or 0}"


def rows_from_db(*, layer_ids: Iterable[int], user_id: int | None) -> dict[int, list[dict[str, Any]]]:
    """The summary rows of the layers for one reader (None: the generic ones), in one query."""
    ids = list(layer_ids)
    query = Summary.objects.filter(layer_id__in=ids)
    query = query.filter(personalized_for_id=user_id) if user_id else query.filter(personalized_for__isnull=True)
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    for row in query.order_by("layer_id", "depth").values(*FIELDS):
        if row["embedding"] is not None:  # a driver may hand a memoryview, which the cache cannot pickle
            row["embedding"] = bytes(row["embedding"])
        out[row["layer_id"]].append(row)
    return out


def put(layer_id: int, user_id: int | None, rows: list[dict[str, Any]]) -> None:
    cache.set_value(key(layer_id, user_id), rows, settings.SUMMARY_CACHE_SECONDS)


def get(layer_id: int, user_id: int | None) -> list[dict[str, Any]] | None:
    value = cache.get_value(key(layer_id, user_id))
    return value if isinstance(value, list) else None


def refresh(layer_id: int, user_id: int | None) -> list[dict[str, Any]]:
    """Re-read the entry from PostgreSQL and store it (write-through after every change)."""
    rows = rows_from_db(layer_ids=[layer_id], user_id=user_id)[layer_id]
    put(layer_id, user_id, rows)
    return rows


def refresh_with_commit(layer_id: int, user_id: int | None) -> None:
    """Refresh now (the writer's own next read) and again after commit (everyone else's)."""
    refresh(layer_id, user_id)
    transaction.on_commit(lambda: refresh(layer_id, user_id))
