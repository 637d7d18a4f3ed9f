"""Reads for workspaces and API keys."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from apps.workspaces import key_cache
from apps.workspaces.keys import hash_secret
from apps.workspaces.models import ApiKey, Membership, Workspace
from apps.workspaces.signals import status_read


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
    """The workspace at a glance: its slug, then what each app that answers `signals.status_read` owns."""
    status: dict[str, Any] = {"workspace": workspace.slug}
    for _receiver, part in status_read.send(sender=Workspace, workspace=workspace):
        status.update(cast(dict[str, Any], part))
    return status
