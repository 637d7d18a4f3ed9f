"""Reads for workspaces and API keys."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from apps.workspaces import key_cache
from apps.workspaces.keys import hash_secret
from apps.workspaces.models import ApiKey, Membership, Workspace


def api_key_get_active(*, secret: str) -> ApiKey | None:
    """The active key with this secret, with its workspace, or None (from this process's key cache when there)."""
    key_hash = hash_secret(secret)
    if (cached := key_cache.cached_key(key_hash)) is not None:
        return cached
    key = ApiKey.objects.select_related("workspace").filter(key_hash=key_hash, revoked_at__isnull=True).first()
    if key is not None:
        key_cache.remember(key)
    return key


def workspaces_for_user(*, user: AbstractBaseUser | AnonymousUser) -> list[Workspace]:
    """Workspaces the user is a member of (all of them for superusers)."""
    if getattr(user, "is_superuser", False):
        return list(Workspace.objects.order_by("slug"))
    if user.pk is None:  # anonymous: `user_id=None` would match the workspaces with no member at all
        return []
    return list(Workspace.objects.filter(memberships__user_id=user.pk).order_by("slug"))


def membership_get(*, workspace: Workspace, user: AbstractBaseUser) -> Membership | None:
    return Membership.objects.filter(workspace=workspace, user_id=user.pk).first()


def workspace_status(*, workspace: Workspace) -> dict[str, Any]:
    """The workspace at a glance: counts, embedding backlog, background queue and active providers.

    A client that bulk-loads polls this until `items_pending_embedding` is 0;
    `embedding_eta_seconds` is that backlog over the embedder's recent rate (null before it has one).
    """
    from apps.core import background, embeddings
    from apps.layers.embedding_rate import rate_recent
    from apps.layers.models import Item, Layer
    from apps.layers.vectors import vector_available

    provider = embeddings.get_provider()
    pending = Item.objects.filter(workspace=workspace, embedding__isnull=True).count()
    rate = rate_recent()
    return {
        "workspace": workspace.slug,
        "layers": Layer.objects.filter(workspace=workspace).count(),
        "items": Item.objects.filter(workspace=workspace).count(),
        "items_pending_embedding": pending,
        "embedding_items_per_s": None if rate is None else round(rate, 2),
        "embedding_eta_seconds": 0.0 if not pending else None if rate is None else round(pending / rate, 1),
        "background": {"mode": settings.BACKGROUND_MODE, "queue_depth": background.queue_depth()},
        "providers": {
            "embedding": {"name": provider.name, "model": provider.model, "dimensions": provider.dimensions},
            "vector_search": "pgvector" if vector_available() else None,
            "keyword_search": "postgresql-fts",
            "cache": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
            "tokenizer": "tiktoken",
            "default_model": settings.DEFAULT_MODEL,
        },
    }
