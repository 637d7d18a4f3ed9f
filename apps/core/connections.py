"""Giving a request's pooled database connection back while it does long CPU work."""

from __future__ import annotations

from django.db import connection


def connection_release() -> None:
    """Return this thread's pooled connection to the pool now, outside a transaction; the next
    query takes one again. Long CPU work (counting the tokens of large texts) then holds no
    connection that other requests wait for. Without a pool, or inside a transaction, nothing."""
    if (
        connection.connection is not None
        and not connection.in_atomic_block
        and connection.settings_dict["OPTIONS"].get("pool")
    ):
        connection.close()
