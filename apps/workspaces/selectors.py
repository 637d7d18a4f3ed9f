"""Reads for workspaces and API keys."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from apps.workspaces.keys import hash_secret
from apps.workspaces.models import ApiKey, Membership, Workspace


def api_key_get_active(*, secret: str) -> ApiKey | None:
    """The active key with this secret, with its workspace, or None."""
    return (
        ApiKey.objects.select_related("workspace").filter(key_hash=hash_secret(secret), revoked_at__isnull=True).first()
    )


def workspaces_for_user(*, user: AbstractBaseUser | AnonymousUser) -> list[Workspace]:
    """Workspaces the user is a member of (all of them for superusers)."""
    if getattr(user, "is_superuser", False):
        return list(Workspace.objects.order_by("slug"))
    return list(Workspace.objects.filter(memberships__user_id=user.pk).order_by("slug"))


def membership_get(*, workspace: Workspace, user: AbstractBaseUser) -> Membership | None:
    return Membership.objects.filter(workspace=workspace, user_id=user.pk).first()
