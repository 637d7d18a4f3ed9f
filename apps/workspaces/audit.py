"""The audit trail: who changed which setting or content of a workspace, when, from what to what.

Higher apps call `record(...)` from their services, inside the writing transaction (an entry is kept
exactly when its change is). Who acted is not passed around: the request's actor is set once where
the request is authenticated (`actor_set`: the API key authentication, the pages' access check) and
read here; anything else (a task, a command) is "system". Values are kept as JSON, each clipped to
`VALUE_CHARS`; a field whose name says it is a secret is masked (`MASK`, or "(none)" when unset), so
no secret reaches the trail, whatever a caller passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from apps.workspaces.models import AuditEntry

VALUE_CHARS = 500
MASK = "•••• (set)"
# A field named like a secret: ending in key, secret, password, token or credentials (`key`, `api_key`,
# `key_sealed` aside: "sealed" is the stored ciphertext), or authorization; `token_budget` is not one.
_SECRET_NAME = re.compile(r"(^|_)(key|secret|password|token|credentials?|authorization)(_sealed)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Actor:
    kind: str  # user | key | system
    label: str
    user_id: int | None = None
    key_id: int | None = None


SYSTEM = Actor(kind="system", label="system")
_actor: ContextVar[Actor | None] = ContextVar("audit_actor", default=None)


def actor_set(actor: Actor | None) -> Token[Actor | None]:
    """Name who acts for the rest of this request (or until the token is reset)."""
    return _actor.set(actor)


def actor_reset(token: Token[Actor | None]) -> None:
    _actor.reset(token)


@contextmanager
def acting_as(actor: Actor) -> Iterator[None]:
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


def current_actor() -> Actor:
    return _actor.get() or SYSTEM


def key_actor(*, key_id: int, name: str, prefix: str) -> Actor:
    """An API key as the trail names it: its name and prefix (never the secret)."""
    return Actor(kind="key", label=f"key {name} ({prefix}…)"[:200], key_id=key_id)


def user_actor(*, user_id: int | None, username: str) -> Actor:
    return Actor(kind="user", label=username[:200], user_id=user_id)


def secret_field(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def _plain(value: Any) -> Any:
    """A JSON-safe, clipped copy of `value`."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): (_masked(v) if secret_field(str(k)) else _plain(v)) for k, v in list(value.items())[:50]}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in list(value)[:50]]
    text = str(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _masked(value: Any) -> str:
    return MASK if value not in (None, "", False) else "(none)"


def changes_of(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """{field: [old, new]} for every field whose value differs (a create has old None, a delete new None)."""
    old, new = old or {}, new or {}
    out: dict[str, list[Any]] = {}
    for name in dict.fromkeys([*old, *new]):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if secret_field(name):
            out[name] = [_masked(before), _masked(after)]
        else:
            out[name] = [_plain(before), _plain(after)]
    return out


def record(
    *,
    workspace_id: int,
    target_kind: str,
    action: str,
    target_id: object = "",
    target_label: str = "",
    old: Mapping[str, Any] | None = None,
    new: Mapping[str, Any] | None = None,
) -> AuditEntry | None:
    """Keep one audit entry for a change by the current actor; an update that changed nothing keeps none."""
    changes = changes_of(old, new)
    if action == "update" and not changes:
        return None
    actor = current_actor()
    return AuditEntry.objects.create(
        workspace_id=workspace_id,
        actor_kind=actor.kind,
        actor=actor.label,
        actor_user_id=actor.user_id,
        actor_key_id=actor.key_id,
        target_kind=target_kind,
        target_id=str(target_id)[:100],
        target_label=target_label[:200],
        action=action,
        changes=changes,
    )


class AuditActorMiddleware:
    """Each request starts with no actor and ends without leaking its own to the next one on this
    thread; the API key authentication and the pages' access check name the actor when they know it."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        token = _actor.set(None)
        try:
            return self.get_response(request)
        finally:
            _actor.reset(token)


def fields_of(obj: object, names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The named attributes of `obj`, for `record(old=..., new=...)`."""
    return {name: getattr(obj, name, None) for name in names}
