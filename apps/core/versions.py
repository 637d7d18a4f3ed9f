"""Workspace content versions: a token that changes whenever anything assembly reads changes.

Cached contexts are keyed by it, so any write in a workspace (items, layers, summaries,
relationships, error patterns, profiles, templates, new embeddings) invalidates them at once.
The version lives in the cache; if it is evicted, a new one is drawn, which only costs misses.
"""

from __future__ import annotations

import uuid

from django.db import transaction

from apps.core import cache

TTL = 24 * 3600


def _key(workspace_id: int) -> str:
    return f"ws-content:{workspace_id}"


def content_version(workspace_id: int) -> str:
    version = cache.get_value(_key(workspace_id))
    if not isinstance(version, str):
        version = uuid.uuid4().hex
        cache.set_value(_key(workspace_id), version, TTL)
    return version


def content_changed(workspace_id: int) -> None:
    """Invalidate the workspace's cached contexts now and again when the transaction commits.

    Now: the writer's own next read must not hit a stale entry. At commit: a reader that cached a
    context from the old rows while the transaction was open must not keep it.
    """

    def bump() -> None:
        cache.set_value(_key(workspace_id), uuid.uuid4().hex, TTL)

    bump()
    transaction.on_commit(bump)


def content_version_peek(workspace_id: int) -> str | None:
    """The current version without drawing a new one (None: none is cached, the next read draws one)."""
    version = cache.get_value(_key(workspace_id))
    return version if isinstance(version, str) else None
