"""Bounding one search statement by the time the request has left."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import OperationalError, transaction

from apps.core.replica_router import read_connection


class SearchTimedOut(Exception):
    """PostgreSQL cancelled the statement at its timeout."""


def _prefixed(ms: int) -> Callable[..., Any]:
    """An execute wrapper sending `SET LOCAL statement_timeout` in the same round trip as each statement.

    Outside a transaction, several statements in one query string run as one implicit transaction,
    so the setting holds for the statement that follows it and ends with it: no BEGIN, set_config
    and COMMIT round trips around every search.
    """

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if many:
            return execute(sql, params, many, context)
        result = execute(f"SET LOCAL statement_timeout = '{ms}ms'; {sql}", params, many, context)
        context["cursor"].nextset()  # past the SET, to the statement's own result
        return result

    return wrapper


@contextmanager
def statement_timeout(ms: int | None) -> Iterator[None]:
    """Run the block's statements with a statement timeout of `ms` (no limit for None)."""
    if ms is None:
        yield
        return
    ms = max(int(ms), 1)
    connection = read_connection()  # the searches' connection: a caught-up replica within replica_reads
    try:
        if connection.in_atomic_block:  # a caller's transaction: a savepoint keeps it usable after a timeout
            with transaction.atomic(using=connection.alias):
                with connection.cursor() as cursor:
                    cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{ms}ms"])
                yield
        else:
            with connection.execute_wrapper(_prefixed(ms)):
                yield
    except OperationalError as exc:
        if "statement timeout" in str(exc) or "canceling statement" in str(exc):
            raise SearchTimedOut(str(exc)) from exc
        raise
