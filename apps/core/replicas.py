"""Which database a request's reads go to: a streaming replica that has caught up with the workspace, else the primary.

Read-your-writes by the workspace's content version (apps/core/versions.py): every committed
change of what assembly reads counts the version up by a statement of its own, after the commit.
A replica whose copy of that row holds at least the version the primary holds now has replayed
that count, and so every write before it, whatever the replica's lag on the rest of the cluster.
One indexed read on the replica decides, and the same connection then serves the request.

A replica that does not answer (down, unreachable, pool empty within REPLICA_POOL_TIMEOUT_SECONDS)
is skipped by this process for REPLICA_RETRY_SECONDS; a lagging one is asked again at the next
request. Either way the request reads the primary and never fails for a replica.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, Error, connections

from apps.core.replica_router import reading
from apps.core.versions import content_version
from apps.metrics.registry import REPLICA_READS

log = logging.getLogger(__name__)

_VERSION = "SELECT version FROM core_contentversion WHERE workspace_id = %s"
_down_until: dict[str, float] = {}
_turn = itertools.count()
_lock = threading.Lock()


def _candidates() -> list[str]:
    """The configured replicas not marked down, starting at the next one in turn (spreads the reads)."""
    replicas: list[str] = list(settings.DATABASE_REPLICAS)
    now = time.monotonic()
    with _lock:
        start = next(_turn) % len(replicas)
    ordered = replicas[start:] + replicas[:start]
    return [alias for alias in ordered if _down_until.get(alias, 0.0) <= now]


def _replica_version(alias: str, workspace_id: int) -> int | None:
    """The workspace's version as the replica has it (0: no row yet), or None when it does not answer."""
    try:
        with connections[alias].cursor() as cur:
            cur.execute(_VERSION, [workspace_id])
            row = cur.fetchone()
    except Error as exc:
        _down_until[alias] = time.monotonic() + settings.REPLICA_RETRY_SECONDS
        log.warning("replica %s did not answer (%s); reading the primary", alias, type(exc).__name__)
        try:
            connections[alias].close()
        except Error:
            pass
        return None
    return int(row[0]) if row else 0


def replica_for(*, workspace_id: int) -> str:
    """The alias to read `workspace_id`'s content from: a replica holding its current version, else the primary."""
    if not settings.DATABASE_REPLICAS or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    needed = content_version(workspace_id)
    if not needed.isdigit():  # this thread's own transaction changed it: only the primary has that
        return DEFAULT_DB_ALIAS
    for alias in _candidates():
        have = _replica_version(alias, workspace_id)
        if have is None:
            REPLICA_READS.labels(result="replica_down").inc()
        elif have >= int(needed):
            REPLICA_READS.labels(result="replica").inc()
            return alias
        else:
            REPLICA_READS.labels(result="replica_behind").inc()
    REPLICA_READS.labels(result="primary").inc()
    return DEFAULT_DB_ALIAS


@contextmanager
def replica_reads(*, workspace_id: int) -> Iterator[str]:
    """Within the block, reads go to `replica_for(workspace_id)` (writes always to the primary); yields the alias."""
    alias = replica_for(workspace_id=workspace_id)
    token = reading.set(None if alias == DEFAULT_DB_ALIAS else alias)
    try:
        yield alias
    finally:
        reading.reset(token)


def replicas_reset() -> None:
    """Forget which replicas this process skips as down: the next request asks each again."""
    _down_until.clear()
