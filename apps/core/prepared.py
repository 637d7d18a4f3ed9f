"""Cursors whose statements PostgreSQL keeps prepared: parsed and planned once per connection.

Django's psycopg cursor binds parameters on the client, so every statement is sent as text and
PostgreSQL parses, analyses and plans it again. The assembly's row fetches are the same few
statements on every request; a server-side binding cursor lets psycopg prepare each of them on
its connection after PREPARE_AFTER runs, after which PostgreSQL reuses the parse tree and, once
its generic plan costs no more than the custom ones, the plan. Connections come from the pool
with their prepared statements (nothing resets them), so the saving holds across requests.
Django turns psycopg's preparing off (`prepare_threshold` None, for transaction poolers such as
PgBouncer, which this service does not use): it is turned on here, on the connections these
cursors use; Django's own cursors bind on the client and never prepare whatever the setting.
`DB_PREPARED_STATEMENTS=0` gives the usual cursor everywhere (for a transaction pooler in front of
DATABASE_URL, whose next transaction may run on a connection that never prepared the statement).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

PREPARE_AFTER = 5  # runs of a statement on a connection before it is prepared (psycopg's default)


@contextmanager
def prepared_cursor(connection: BaseDatabaseWrapper) -> Iterator[CursorWrapper]:
    """A cursor of `connection` with server-side binding, wrapped as `connection.cursor()` wraps its own
    (query logging, error translation, thread checks); outside PostgreSQL, or while an execute
    wrapper rewrites statements (a statement timeout prefixes a SET, which a prepared statement
    cannot hold), or with DB_PREPARED_STATEMENTS off, the usual cursor."""
    if connection.vendor != "postgresql" or connection.execute_wrappers or not settings.DB_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    cursor_class = _logged_prepared_cursor_class()

    connection.close_if_health_check_failed()
    connection.ensure_connection()
    if connection.connection.prepare_threshold is None:
        connection.connection.prepare_threshold = PREPARE_AFTER
    with connection.wrap_database_errors:
        # As connection.cursor() wraps the cursor it creates (a private step of Django's: no public one takes a cursor).
        cursor = connection._prepare_cursor(cursor_class(connection.connection))  # type: ignore[attr-defined]
    with cursor:
        yield cursor


@cache
def _logged_prepared_cursor_class() -> type:
    """Django's ServerBindingCursor that keeps the statement it ran when it ran a prepared one.

    Django logs a statement (DEBUG, `CaptureQueriesContext`, `assert_num_queries`) by reading
    psycopg's `cursor._query`, which psycopg sets when it sends a statement as text but not when it
    runs an already prepared one: the logged SQL was None (the full suite's access test failed on it)."""
    from django.db.backends.postgresql.base import ServerBindingCursor  # type: ignore[attr-defined]

    class LoggedPreparedCursor(ServerBindingCursor):
        def _send_query_prepared(self, name: bytes, pgq: Any, *, binary: bool | None = None) -> None:
            self._query = pgq
            super()._send_query_prepared(name, pgq, binary=binary)

    return LoggedPreparedCursor
