"""Reads for workspaces and API keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import F, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from apps.workspaces import key_cache
from apps.workspaces.keys import hash_secret
from apps.workspaces.models import ApiKey, AuditEntry, Invitation, Membership, Workspace
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


def workspace_get_by_slug(*, slug: str) -> Workspace | None:
    return Workspace.objects.filter(slug=slug).first()


def workspaces_for_user(*, user: AbstractBaseUser | AnonymousUser) -> list[Workspace]:
    """Workspaces the user is a member of (all of them for superusers)."""
    if getattr(user, "is_superuser", False):
        return list(Workspace.objects.order_by("slug"))
    if user.pk is None:  # anonymous: `user_id=None` would match the workspaces with no member at all
        return []
    return list(Workspace.objects.filter(memberships__user_id=user.pk).order_by("slug"))


def workspaces_with_roles(*, user: AbstractBaseUser | AnonymousUser) -> list[Workspace]:
    """The workspaces the user may open, by slug, each with `member_role` (None: not a member; a
    superuser opens every workspace). One query."""
    if user.pk is None:
        return []
    if getattr(user, "is_superuser", False):
        role = Membership.objects.filter(workspace=OuterRef("pk"), user_id=user.pk).values("role")[:1]
        return list(Workspace.objects.annotate(member_role=Subquery(role)).order_by("slug"))
    return list(
        Workspace.objects.filter(memberships__user_id=user.pk)
        .annotate(member_role=F("memberships__role"))
        .order_by("slug")
    )


def membership_get(*, workspace: Workspace, user: AbstractBaseUser) -> Membership | None:
    return Membership.objects.filter(workspace=workspace, user_id=user.pk).first()


def memberships_list(*, workspace: Workspace) -> QuerySet[Membership]:
    """The workspace's members with their users, by username."""
    return Membership.objects.filter(workspace=workspace).select_related("user").order_by("user__username")


def membership_get_by_id(*, workspace: Workspace, membership_id: int) -> Membership | None:
    """One membership of the workspace, with its user (None: none such in this workspace)."""
    return Membership.objects.filter(workspace=workspace, pk=membership_id).select_related("user").first()


def api_keys_list(*, workspace: Workspace) -> QuerySet[ApiKey]:
    """The workspace's API keys, revoked ones included, newest first."""
    return ApiKey.objects.filter(workspace=workspace).order_by("-created_at")


def api_key_get(*, workspace: Workspace, key_id: int) -> ApiKey | None:
    """One API key of the workspace (None: none such in this workspace)."""
    return ApiKey.objects.filter(workspace=workspace, pk=key_id).first()


def workspace_status(*, workspace: Workspace) -> dict[str, Any]:
    """The workspace at a glance: its slug, then what each app that answers `signals.status_read` owns."""
    status: dict[str, Any] = {"workspace": workspace.slug}
    for _receiver, part in status_read.send(sender=Workspace, workspace=workspace):
        status.update(cast(dict[str, Any], part))
    return status


def invitation_valid(*, token: str) -> Invitation | None:
    """The pending invitation (not used, revoked or expired) this token opens, with its workspace, or None."""
    if not token:
        return None
    return (
        Invitation.objects.select_related("workspace", "created_by")
        .filter(token_hash=hash_secret(token), accepted_at__isnull=True, revoked_at__isnull=True)
        .filter(expires_at__gt=timezone.now())
        .first()
    )


def invitation_get(*, workspace: Workspace, invitation_id: int) -> Invitation | None:
    """One invitation of the workspace (None: none such in this workspace)."""
    return Invitation.objects.filter(workspace=workspace, pk=invitation_id).first()


def invitations_list(*, workspace: Workspace, pending_only: bool = False) -> QuerySet[Invitation]:
    """The workspace's invitations, newest first (`pending_only`: those that can still be accepted)."""
    rows = Invitation.objects.filter(workspace=workspace).select_related("created_by", "accepted_by", "created_by_key")
    if pending_only:
        rows = rows.filter(accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now())
    return rows.order_by("-created_at", "-id")


def workspaces_retention() -> list[tuple[int, int]]:
    """(workspace id, records_retention_days) of every workspace, for the retention sweep."""
    return list(Workspace.objects.order_by("id").values_list("id", "records_retention_days"))


def member_ids_by_username(*, workspace_id: int) -> dict[str, int]:
    """The user id of each member of the workspace, by username (one query)."""
    rows = Membership.objects.filter(workspace_id=workspace_id).values_list("user__username", "user_id")
    return dict(rows)


@dataclass(frozen=True)
class AuditFilters:
    """What the audit API and page narrow the trail to; every field optional (empty: no filter)."""

    target_kind: str = ""
    target_id: str = ""
    actor: str = ""  # the start of the actor's label: a username, or `key <name>`
    action: str = ""
    since: datetime | None = None  # at or after
    until: datetime | None = None  # before
    text: str = ""  # within the object's label or id, the actor or the old and new values


NO_AUDIT_FILTERS = AuditFilters()


def audit_entries(*, workspace: Workspace, filters: AuditFilters = NO_AUDIT_FILTERS) -> QuerySet[AuditEntry]:
    """The workspace's audit entries that pass `filters`, newest first (the API's and the page's one reading)."""
    entries = AuditEntry.objects.filter(workspace=workspace)
    if filters.target_kind:
        entries = entries.filter(target_kind=filters.target_kind)
    if filters.target_id:
        entries = entries.filter(target_id=filters.target_id)
    if filters.actor:
        entries = entries.filter(actor__istartswith=filters.actor)
    if filters.action:
        entries = entries.filter(action=filters.action)
    if filters.since is not None:
        entries = entries.filter(created_at__gte=filters.since)
    if filters.until is not None:
        entries = entries.filter(created_at__lt=filters.until)
    if filters.text:
        entries = entries.annotate(changes_text=Cast("changes", TextField())).filter(
            Q(target_label__icontains=filters.text)
            | Q(target_id__iexact=filters.text)
            | Q(actor__icontains=filters.text)
            | Q(changes_text__icontains=filters.text)
        )
    return entries.order_by("-created_at", "-id")


def audit_actors(*, workspace: Workspace, limit: int = 50) -> list[str]:
    """The actors named in the workspace's trail, by name (for a filter's suggestions)."""
    found = AuditEntry.objects.filter(workspace=workspace).values_list("actor", flat=True).distinct()
    return list(found.order_by("actor")[:limit])
