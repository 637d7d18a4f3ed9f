"""Bounding one search statement by the time the request has left."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import OperationalError, connection, transaction


class SearchTimedOut(Exception):
    """PostgreSQL cancelled the statement at its timeout."""


@contextmanager
def statement_timeout(ms: int | None) -> Iterator[None]:
    """Run the block's statements with `SET LOCAL statement_timeout` (no limit for None)."""
    if ms is None:
        yield
        return
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{max(int(ms), 1)}ms"])
            yield
    except OperationalError as exc:
        if "statement timeout" in str(exc) or "canceling statement" in str(exc):
            raise SearchTimedOut(str(exc)) from exc
        raise
