"""Invitations: how a person joins a workspace (no admin adds an existing user without their consent).

An admin (in the pages, or with an admin-scoped key) makes an invitation with a role; its link
carries a random token of which only the SHA-256 is stored. The person who opens it signs up or
signs in and accepts; only then do they become a member. A link works once, until it expires
(`INVITATION_DAYS` by default) or is revoked. Accepting never lowers a role the person already has.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.core.errors import Conflict, InvalidInput, NotFound
from apps.core.field_errors import INVALID_DAYS, INVALID_NOTE, INVALID_ROLE
from apps.workspaces.errors import INVITATION_ACCEPTED, INVITATION_INVALID
from apps.workspaces.keys import hash_secret
from apps.workspaces.models import ROLE_ORDER, ApiKey, Invitation, Membership, Role, Workspace

TOKEN_PREFIX = "inv_"
MAX_DAYS = 90


@dataclass(frozen=True)
class CreatedInvitation:
    """A new invitation and its token; the token is not stored and cannot be shown again."""

    invitation: Invitation
    token: str


def invalid_invitation() -> NotFound:
    """The one refusal for an unknown, used, revoked or expired link (which of them is nobody's business)."""
    return NotFound(
        "This invitation link is not valid: it was used, revoked or has expired, or it is mistyped. "
        "Ask an admin of the workspace for a new one.",
        code=INVITATION_INVALID,
    )


def invitation_create(
    *,
    workspace: Workspace,
    role: str,
    note: str = "",
    days: int | None = None,
    created_by: AbstractBaseUser | None = None,
    created_by_key: ApiKey | None = None,
) -> CreatedInvitation:
    """A pending invitation to `workspace` as `role`, valid for `days` (1-90; INVITATION_DAYS by default)."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}", code=INVALID_ROLE)
    note = note.strip()
    if len(note) > 200:
        raise InvalidInput("note must be at most 200 characters", code=INVALID_NOTE)
    days = settings.INVITATION_DAYS if days is None else days
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"days must be 1 to {MAX_DAYS}", code=INVALID_DAYS)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        workspace=workspace,
        role=role,
        note=note,
        token_hash=hash_secret(token),
        created_by_id=created_by.pk if created_by is not None else None,
        created_by_key=created_by_key,
        expires_at=timezone.now() + timedelta(days=days),
    )
    return CreatedInvitation(invitation=invitation, token=token)


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    """Revoke a pending (or expired) invitation; a used one is a 409 `invitation_accepted` (remove the member)."""
    with transaction.atomic():
        locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if locked.accepted_at is not None:
            raise Conflict("This invitation was accepted already: remove the member instead.", code=INVITATION_ACCEPTED)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
    return locked


@transaction.atomic
def invitation_accept(*, token: str, user: AbstractBaseUser) -> Membership:
    """Make the signed-in `user` a member with the invitation's role (or keep a higher one they have), once.

    The invitation's row is locked, so of two people racing for one link exactly one gets in.
    Unknown, used, revoked or expired: 404 `invitation_invalid`.
    """
    if not token:
        raise invalid_invitation()
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("workspace")
        .filter(token_hash=hash_secret(token), accepted_at__isnull=True, revoked_at__isnull=True)
        .filter(expires_at__gt=timezone.now())
        .first()
    )
    if invitation is None:
        raise invalid_invitation()
    membership = Membership.objects.select_for_update().filter(workspace=invitation.workspace, user_id=user.pk).first()
    if membership is None:
        membership = Membership.objects.create(workspace=invitation.workspace, user_id=user.pk, role=invitation.role)
    elif ROLE_ORDER.index(invitation.role) > ROLE_ORDER.index(membership.role):
        membership.role = invitation.role
        membership.save(update_fields=["role"])
    invitation.accepted_at = timezone.now()
    invitation.accepted_by_id = user.pk
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership
