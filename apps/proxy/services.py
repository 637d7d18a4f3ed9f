"""Writes of the proxy's settings: a workspace's upstreams and where its new sessions go."""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from django.db import transaction

from apps.core.errors import InvalidInput, NotFound
from apps.core.field_errors import INVALID_BASE_URL, INVALID_PARENT
from apps.layers.errors import LAYER_NOT_FOUND
from apps.layers.models import Layer, LayerKind
from apps.proxy.errors import UPSTREAM_NOT_FOUND
from apps.proxy.models import DEFAULT_BASE_URLS, ProxySettings, Upstream, WireFormat
from apps.proxy.upstream_keys import key_seal
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget, Workspace


class _Keep:
    """Leave the field as it is (an argument not given)."""


KEEP: Final = _Keep()


def base_url_check(value: str) -> str:
    """The base URL as stored (no trailing slash), or InvalidInput `invalid_base_url`."""
    url = value.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput("base_url must be an http or https URL", code=INVALID_BASE_URL)
    if parts.username or parts.password:
        raise InvalidInput("base_url must not carry credentials: give the key as `key`", code=INVALID_BASE_URL)
    if parts.query or parts.fragment:
        raise InvalidInput("base_url takes no query or fragment", code=INVALID_BASE_URL)
    if len(url) > 500:
        raise InvalidInput("base_url is limited to 500 characters", code=INVALID_BASE_URL)
    return url


def kind_check(kind: str) -> str:
    if kind not in WireFormat.values:
        raise NotFound(f"no upstream kind {kind!r} (kinds: {', '.join(WireFormat.values)})", code=UPSTREAM_NOT_FOUND)
    return kind


@transaction.atomic
def upstream_set(
    *, workspace: Workspace, kind: str, base_url: str | _Keep = KEEP, key: str | None | _Keep = KEEP
) -> tuple[Upstream, bool]:
    """Create or change the workspace's upstream of `kind`; (upstream, created). `key=None` removes
    the stored key; KEEP leaves a field as it is (a new upstream starts at the provider's own URL)."""
    kind_check(kind)
    upstream = Upstream.objects.select_for_update().filter(workspace=workspace, kind=kind).first()
    created = upstream is None
    before = None if upstream is None else {"base_url": upstream.base_url, "key": bool(upstream.key_sealed)}
    if upstream is None:
        upstream = Upstream(workspace=workspace, kind=kind, base_url=DEFAULT_BASE_URLS[kind])
    if not isinstance(base_url, _Keep):
        upstream.base_url = base_url_check(base_url)
    if key is None:
        upstream.key_sealed = b""
    elif not isinstance(key, _Keep):
        upstream.key_sealed = key_seal(workspace_id=workspace.pk, kind=kind, key=key)
    upstream.save()
    audit.record(  # the key only as set or not: `audit` masks a field named key
        workspace_id=workspace.pk,
        target_kind=AuditTarget.UPSTREAM,
        action="create" if created else "update",
        target_id=kind,
        target_label=kind,
        old=before,
        new={"base_url": upstream.base_url, "key": bool(upstream.key_sealed)},
    )
    return upstream, created


def upstream_delete(*, workspace: Workspace, kind: str) -> None:
    deleted, _ = Upstream.objects.filter(workspace=workspace, kind=kind_check(kind)).delete()
    if not deleted:
        raise NotFound(f"no {kind} upstream is configured", code=UPSTREAM_NOT_FOUND)
    audit.record(workspace_id=workspace.pk, target_kind=AuditTarget.UPSTREAM, action="delete", target_id=kind)


# Sessions hang under a layer of these kinds (a session under a session is refused by the layers).
PARENT_KINDS = (LayerKind.COMPANY, LayerKind.ORG, LayerKind.TEAM, LayerKind.PROJECT, LayerKind.MULTI_SESSION)


def proxy_settings_set(*, workspace: Workspace, default_parent: Layer | None) -> ProxySettings:
    """Set where the proxy's new sessions go when a call names no `X-Context-Parent` (None: the company layer)."""
    if default_parent is not None and default_parent.workspace_id != workspace.pk:
        raise NotFound("layer not found", code=LAYER_NOT_FOUND)
    if default_parent is not None and default_parent.kind not in PARENT_KINDS:
        raise InvalidInput("the default parent must be a layer above sessions", code=INVALID_PARENT)
    settings_row, _ = ProxySettings.objects.update_or_create(
        workspace=workspace, defaults={"default_parent": default_parent}
    )
    return settings_row
