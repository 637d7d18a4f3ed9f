"""The database router: reads inside a `replica_reads` block go to the replica chosen for it, everything
else (every write, every read outside such a block, every read inside a transaction) to the primary.

The choice lives in a context variable set by `apps.core.replicas.replica_reads` for one request's
reads; the raw-SQL searches take the same connection through `read_connection()`. A read inside an
open transaction on the primary stays there: it must see the transaction's own writes.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper

reading: ContextVar[str | None] = ContextVar("replica_reading", default=None)


def read_alias() -> str:
    """The alias this block's reads go to: its replica, or the primary (none chosen, or a transaction open)."""
    alias = reading.get()
    if alias is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return alias


def read_connection() -> BaseDatabaseWrapper:
    """The connection for a raw-SQL read (the keyword and vector searches): the block's replica or the primary."""
    return connections[read_alias()]


class ReplicaRouter:
    """Reads to `read_alias()`, writes and migrations to the primary; every alias holds the same data."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str:
        return read_alias()

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
