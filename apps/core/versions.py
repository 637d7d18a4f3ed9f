"""Workspace content versions: a token that changes whenever anything assembly reads changes.

Cached contexts (and each process's layer snapshots and remembered session errors) are keyed by
it, so any write in a workspace (items, layers, summaries, relationships, error patterns, profiles,
templates, new embeddings) invalidates them at once.

The version is a number in PostgreSQL (`ContentVersion`), so every worker process and every
instance reads the same one, with Redis or without, and a Redis back from an outage holds nothing
under a version that still counts: the writes made while it was away moved the number on. A change
is counted right after its transaction commits, by one statement of its own: the row's lock is held
for microseconds and never across a writer's transaction, so writers of one workspace neither wait
on each other nor deadlock on it. A reader that takes the old number between a commit and its count
caches an answer under a number that is stale the moment after (never the reverse: the count follows
the commit). Inside the writer's open transaction, its own reads get a token of their own (`t` +
random, new at each change) until the commit, so the writer never reads an entry of the old rows.
A process that dies between a commit and its count leaves that moment's cached contexts to expire
(ASSEMBLY_CACHE_SECONDS). Within `pinned_reads` (a context assembly) a workspace's version is read
once and reused, which is safe: a context cached under a version read before a change is stale
under the next one; the thread's own changes still show at once.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from django.db import DatabaseError, connection, transaction

log = logging.getLogger(__name__)

_READ = "SELECT version FROM core_contentversion WHERE workspace_id = %s"
_COUNT = (
    "INSERT INTO core_contentversion (workspace_id, version) VALUES (%s, 1) "
    "ON CONFLICT (workspace_id) DO UPDATE SET version = core_contentversion.version + 1 RETURNING version"
)
P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class _Pending:
    """A change of this thread's open transaction: the token its reads get, and the commit hook that counts it."""

    token: str
    hook: Callable[[], None]


_local = threading.local()


def _pending() -> dict[int, _Pending]:
    pending: dict[int, _Pending] | None = getattr(_local, "pending", None)
    if pending is None:
        pending = _local.pending = {}
    return pending


def _waiting(hook: Callable[[], None]) -> bool:
    """Whether `hook` still waits for the commit of this thread's open transaction (not run, not rolled back)."""
    return connection.in_atomic_block and any(entry[1] is hook for entry in connection.run_on_commit)


def content_version(workspace_id: int) -> str:
    """The workspace's version: one indexed read (once per `pinned_reads`), or this transaction's own
    token after a change in it."""
    pending = _pending()
    if (entry := pending.get(workspace_id)) is not None:
        if _waiting(entry.hook):
            return entry.token
        del pending[workspace_id]
    pins: dict[int, str] | None = getattr(_local, "pins", None)
    if pins is not None and (pinned := pins.get(workspace_id)) is not None:
        return pinned
    if pins is None:
        with connection.cursor() as cur:
            cur.execute(_READ, [workspace_id])
            row = cur.fetchone()
        return str(row[0]) if row else "0"
    version = _pinned_read(workspace_id)
    pins[workspace_id] = version
    return version


UNREAD = "u"  # the prefix of the token of a version that could not be read in time


def _pinned_read(workspace_id: int) -> str:
    """The version for a `pinned_reads` caller (an assembly): read, or, when the read met a statement or
    lock timeout (an overloaded server, a table held by a migration), a token of its own that no
    cached entry or snapshot carries, so that the assembly goes on without the cache instead of
    failing (issue 22: overload degrades); `version_unread` tells the caller."""
    from apps.core.db_health import classify

    try:
        with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
            with connection.cursor() as cur:
                cur.execute(_READ, [workspace_id])
                row = cur.fetchone()
    except DatabaseError as exc:
        if classify(exc) != "timeout":
            raise
        log.warning(
            "workspace %s: its content version was not read in time (%s); going on without the cache", workspace_id, exc
        )
        return UNREAD + uuid.uuid4().hex
    return str(row[0]) if row else "0"


def version_unread(workspace_id: int) -> bool:
    """Whether this `pinned_reads` call could not read the workspace's version in time (see `_pinned_read`)."""
    pins: dict[int, str] | None = getattr(_local, "pins", None)
    return pins is not None and pins.get(workspace_id, "").startswith(UNREAD)


def pinned_reads(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: while `func` runs, this thread reads each workspace's version at most once."""

    @functools.wraps(func)
    def pinned(*args: P.args, **kwargs: P.kwargs) -> R:
        if getattr(_local, "pins", None) is not None:  # an outer call pins already
            return func(*args, **kwargs)
        _local.pins = {}
        try:
            return func(*args, **kwargs)
        finally:
            _local.pins = None

    return pinned


def _count(workspace_id: int) -> None:
    _pending().pop(workspace_id, None)
    try:
        with connection.cursor() as cur:
            cur.execute(_COUNT, [workspace_id])
            row = cur.fetchone()
    except DatabaseError:  # after the commit: the write stands; its cached contexts expire instead
        log.error("workspace %s: its content version could not be counted", workspace_id, exc_info=True)
        row = None
    pins: dict[int, str] | None = getattr(_local, "pins", None)
    if pins is not None:
        pins.pop(workspace_id, None)
        if row:
            pins[workspace_id] = str(row[0])


def content_changed(workspace_id: int) -> None:
    """Count a change of the workspace: after the open transaction commits (its own reads meanwhile
    get a new token), or at once outside a transaction (call it after the write)."""
    if not connection.in_atomic_block:
        _count(workspace_id)
        return
    pending = _pending()
    token = "t" + uuid.uuid4().hex
    if (entry := pending.get(workspace_id)) is not None and _waiting(entry.hook):
        entry.token = token
        return
    hook = functools.partial(_count, workspace_id)
    transaction.on_commit(hook)
    pending[workspace_id] = _Pending(token, hook)


def content_version_peek(workspace_id: int) -> str | None:
    """The committed version (None: the workspace has never changed since versions were kept)."""
    with connection.cursor() as cur:
        cur.execute(_READ, [workspace_id])
        row = cur.fetchone()
    return str(row[0]) if row else None
