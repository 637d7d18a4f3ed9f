"""Running one part of a request so that its failure leaves the rest standing (issue 25: a failing
search, source or stored value never fails the whole answer).

`isolated(fn)` runs `fn`; an exception from it is returned instead of raised, except those that
are not the part's own: a cancel (the caller left), a lost database or no pooled connection free
(the request cannot go on, and `core/db_health.py` answers it 503) and a domain error (the request
itself is wrong: a 4xx). Inside a caller's transaction the part runs in a savepoint, so the
transaction stays usable after it failed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from django.db import connection, transaction

from apps.core.db_health import classify
from apps.core.deadline import Cancelled
from apps.core.errors import DomainError

log = logging.getLogger(__name__)

T = TypeVar("T")


def passes_through(exc: BaseException) -> bool:
    """An exception that is not a part's own failure: the whole request must see it."""
    return isinstance(exc, Cancelled | DomainError) or classify(exc) in ("unavailable", "overloaded")


def isolated(fn: Callable[[], T], *, what: str) -> tuple[T | None, Exception | None]:
    """`(fn(), None)`, or `(None, the exception)` when `fn` failed on its own; logged with `what`."""
    try:
        if connection.in_atomic_block:
            with transaction.atomic():
                return fn(), None
        return fn(), None
    except Exception as exc:
        if passes_through(exc):
            raise
        log.warning("%s failed and was left out: %s: %s", what, type(exc).__name__, exc, exc_info=True)
        return None, exc
