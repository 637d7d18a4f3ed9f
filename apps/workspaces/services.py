"""Writes for workspaces, members and API keys."""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.errors import Conflict, DomainError, InvalidInput
from apps.core.field_errors import INVALID_NAME, INVALID_ROLE, INVALID_SCOPES, field_code
from apps.workspaces import audit
from apps.workspaces.errors import INVALID_SLUG, LAST_ADMIN, WORKSPACE_EXISTS
from apps.workspaces.keys import generate_secret, hash_secret
from apps.workspaces.models import ApiKey, AuditTarget, Membership, Role, Scope, Workspace, default_scopes
from apps.workspaces.signals import workspace_created

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CreatedKey:
    """A new key and its secret; the secret is not stored and cannot be shown again."""

    api_key: ApiKey
    secret: str


def api_key_create(*, workspace: Workspace, name: str, scopes: list[str] | None = None) -> CreatedKey:
    """A new key with `scopes` (default read+write; `admin` only when asked for)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInput("key name must be 1-100 characters", code=INVALID_NAME)
    scopes = scopes_clean(scopes=default_scopes() if scopes is None else scopes)
    secret = generate_secret()
    key = ApiKey.objects.create(
        workspace=workspace, name=name, prefix=secret[:10], key_hash=hash_secret(secret), scopes=scopes
    )
    audit.record(
        workspace_id=workspace.pk,
        target_kind=AuditTarget.KEY,
        action="create",
        target_id=key.pk,
        target_label=f"{name} ({key.prefix}…)",
        new={"name": name, "prefix": key.prefix, "scopes": scopes},
    )
    return CreatedKey(api_key=key, secret=secret)


def scopes_clean(*, scopes: list[str]) -> list[str]:
    """The scopes deduplicated in their canonical order; unknown or none at all is a 400 `invalid_scopes`."""
    unknown = sorted(set(scopes) - set(Scope.values))
    if unknown or not scopes:
        message = f"scopes must be a non-empty subset of {', '.join(Scope.values)}"
        raise InvalidInput(message, code=INVALID_SCOPES, details={"unknown": unknown})
    return [scope for scope in Scope.values if scope in scopes]


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
        audit.record(
            workspace_id=api_key.workspace_id,
            target_kind=AuditTarget.KEY,
            action="revoke",
            target_id=api_key.pk,
            target_label=f"{api_key.name} ({api_key.prefix}…)",
            old={"revoked_at": None},
            new={"revoked_at": api_key.revoked_at},
        )
    return api_key


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record the key's last use, at most once a minute (it is read on every request)."""
    now = timezone.now()
    if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() > 60:
        try:
            with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
                ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        except DatabaseError as exc:
            # Bookkeeping: a statement or lock timeout (the key's row held by another transaction, an
            # overloaded server) leaves the last use as it was, it does not fail the request (issue 22).
            from apps.core.db_health import classify  # here: db_health's imports reach back to this module

            if classify(exc) != "timeout":
                raise
            log.warning("API key %s: its last use was not recorded in time: %s", api_key.pk, exc)
            return
        api_key.last_used_at = now


@transaction.atomic
def workspace_errors(*, slug: str, name: str = "") -> dict[str, DomainError]:
    """Every reason a workspace cannot be made with this slug and name ({} when fine); the first is what
    `workspace_create` raises, the pages show them all."""
    errors: dict[str, DomainError] = {}
    candidate = Workspace(slug=slug, name=name or slug)
    try:
        candidate.full_clean(validate_unique=False)
    except ValidationError as exc:
        for field, messages in exc.message_dict.items():
            if field == "slug":
                errors["slug"] = InvalidInput(
                    f"invalid workspace slug {slug!r}: letters, digits, - and _ only, at most 64", code=INVALID_SLUG
                )
            else:
                errors[field] = InvalidInput(f"{field}: {messages[0]}", code=field_code(field))
    if "slug" not in errors and Workspace.objects.filter(slug=slug).exists():
        errors["slug"] = Conflict(f"workspace {slug!r} already exists", code=WORKSPACE_EXISTS)
    return {name: errors[name] for name in ("slug", "name") if name in errors}


@transaction.atomic
def workspace_create(
    *, slug: str, name: str = "", key_name: str = "default", admin: AbstractBaseUser | None = None
) -> tuple[Workspace, CreatedKey]:
    """A workspace with what every workspace needs and a first API key; `admin` becomes its admin member.

    The company root layer is made by the `workspace_created` receiver of apps.layers, in this same
    transaction (workspaces sits below layers and does not import it).
    """
    errors = workspace_errors(slug=slug, name=name)
    if errors:
        raise next(iter(errors.values()))
    workspace = Workspace(slug=slug, name=name or slug)
    try:
        with transaction.atomic():
            workspace.save()
    except IntegrityError as exc:  # the same slug taken concurrently since the check
        raise Conflict(f"workspace {slug!r} already exists", code=WORKSPACE_EXISTS) from exc
    workspace_created.send(sender=Workspace, workspace=workspace)
    if admin is not None:
        membership_set(workspace=workspace, user=admin, role=Role.ADMIN)
    return workspace, api_key_create(workspace=workspace, name=key_name)


def _keep_an_admin(*, workspace: Workspace, leaving: Membership) -> None:
    """Refuse to leave a workspace without a member who can manage its keys and members."""
    if leaving.role != Role.ADMIN:
        return
    others = Membership.objects.filter(workspace=workspace, role=Role.ADMIN).exclude(pk=leaving.pk)
    if not others.select_for_update().exists():
        raise Conflict(
            f"{leaving.user.get_username()} is the last admin of {workspace.name}: make another member admin first.",
            code=LAST_ADMIN,
        )


@transaction.atomic
def membership_set(*, workspace: Workspace, user: AbstractBaseUser, role: str) -> Membership:
    """Add `user` to the workspace with `role`, or change their role; the last admin stays admin (`last_admin`)."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}", code=INVALID_ROLE)
    current = Membership.objects.select_for_update().filter(workspace=workspace, user_id=user.pk).first()
    if current is not None and role != Role.ADMIN:
        _keep_an_admin(workspace=workspace, leaving=current)
    membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    audit.record(
        workspace_id=workspace.pk,
        target_kind=AuditTarget.MEMBER,
        action="create" if current is None else "update",
        target_id=user.pk,
        target_label=user.get_username(),
        old=None if current is None else {"role": current.role},
        new={"role": role},
    )
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    """Remove a member; the last admin cannot be removed (`last_admin`)."""
    _keep_an_admin(workspace=membership.workspace, leaving=membership)
    audit.record(
        workspace_id=membership.workspace_id,
        target_kind=AuditTarget.MEMBER,
        action="delete",
        target_id=membership.user_id,
        target_label=membership.user.get_username(),
        old={"role": membership.role},
    )
    membership.delete()


class Keep(enum.Enum):
    """A setting left as it is (where None is itself a value: "forever")."""

    KEEP = "keep"


def workspace_settings_update(
    *,
    workspace: Workspace,
    name: str | None = None,
    records_retention_days: int | None = None,
    messages_retention_days: int | None | Keep = Keep.KEEP,
    layer_kind_ttl_days: Mapping[str, int] | None = None,
) -> Workspace:
    """Change a workspace's name or retention (the next hourly sweeps apply a shorter one).
    `layer_kind_ttl_days` replaces the whole map ({} clears it); its kinds are checked by the caller."""
    changed: list[str] = []
    audited = ["name", "records_retention_days", "messages_retention_days", "layer_kind_ttl_days"]
    before = audit.fields_of(workspace, audited)
    if name is not None:
        workspace.name = name
        changed.append("name")
    if records_retention_days is not None:
        workspace.records_retention_days = records_retention_days
        changed.append("records_retention_days")
    if messages_retention_days is not Keep.KEEP:
        workspace.messages_retention_days = messages_retention_days
        changed.append("messages_retention_days")
    if layer_kind_ttl_days is not None:
        workspace.layer_kind_ttl_days = dict(layer_kind_ttl_days)
        changed.append("layer_kind_ttl_days")
    if changed:
        workspace.save(update_fields=changed)
        audit.record(
            workspace_id=workspace.pk,
            target_kind=AuditTarget.WORKSPACE,
            action="update",
            target_id=workspace.pk,
            target_label=workspace.slug,
            old=before,
            new=audit.fields_of(workspace, audited),
        )
    return workspace


def workspace_lock(*, workspace_id: int) -> None:
    """Lock the workspace's row until the transaction ends: a per-workspace count checked before an
    insert (a cap) cannot then be passed by two concurrent requests."""
    Workspace.objects.select_for_update().filter(pk=workspace_id).first()
