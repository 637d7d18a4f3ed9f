"""Writes for workspaces, members and API keys."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.core.errors import Conflict, InvalidInput
from apps.workspaces.keys import generate_secret, hash_secret
from apps.workspaces.models import ApiKey, Membership, Role, Scope, Workspace, default_scopes


@dataclass(frozen=True)
class CreatedKey:
    """A new key and its secret; the secret is not stored and cannot be shown again."""

    api_key: ApiKey
    secret: str


def api_key_create(*, workspace: Workspace, name: str, scopes: list[str] | None = None) -> CreatedKey:
    """A new key with `scopes` (default read+write; `admin` only when asked for)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInput("key name must be 1-100 characters", code="invalid_name")
    scopes = scopes_clean(scopes=default_scopes() if scopes is None else scopes)
    secret = generate_secret()
    key = ApiKey.objects.create(
        workspace=workspace, name=name, prefix=secret[:10], key_hash=hash_secret(secret), scopes=scopes
    )
    return CreatedKey(api_key=key, secret=secret)


def scopes_clean(*, scopes: list[str]) -> list[str]:
    """The scopes deduplicated in their canonical order; unknown or none at all is a 400 `invalid_scopes`."""
    unknown = sorted(set(scopes) - set(Scope.values))
    if unknown or not scopes:
        message = f"scopes must be a non-empty subset of {', '.join(Scope.values)}"
        raise InvalidInput(message, code="invalid_scopes", details={"unknown": unknown})
    return [scope for scope in Scope.values if scope in scopes]


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record the key's last use, at most once a minute (it is read on every request)."""
    now = timezone.now()
    if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


@transaction.atomic
def workspace_create(*, slug: str, name: str = "", key_name: str = "default") -> tuple[Workspace, CreatedKey]:
    """A workspace with its company root layer and a first API key."""
    from apps.layers.services import layer_create_root

    if Workspace.objects.filter(slug=slug).exists():
        raise Conflict(f"workspace {slug!r} already exists", code="workspace_exists")
    workspace = Workspace(slug=slug, name=name or slug)
    try:
        workspace.full_clean()
    except Exception as exc:
        raise InvalidInput(f"invalid workspace slug {slug!r}", code="invalid_slug") from exc
    workspace.save()
    layer_create_root(workspace=workspace, name=workspace.name)
    return workspace, api_key_create(workspace=workspace, name=key_name)


def membership_set(*, workspace: Workspace, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}", code="invalid_role")
    membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    return membership
