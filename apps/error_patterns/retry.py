"""Retry a transaction on PostgreSQL serialization failures and deadlocks (concurrent reports of one agent or pattern).

Parallel agents report attempts at once; the services use atomic increments and row locks so no
update is lost, and a transaction PostgreSQL aborts to break a deadlock is simply run again,
with exponential backoff and jitter.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError, transaction

T = TypeVar("T")
RETRYABLE = {"40001", "40P01"}  # serialization_failure, deadlock_detected


def _retryable(exc: BaseException) -> bool:
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlstate", None) in RETRYABLE or getattr(cause, "pgcode", None) in RETRYABLE


def atomic_with_retry(fn: Callable[[], T], *, attempts: int = 6, base_delay: float = 0.02) -> T:
    """Run `fn` in its own transaction, again on a retryable failure; the last failure propagates."""
    for attempt in range(attempts):
        try:
            with transaction.atomic():
                return fn()
        except OperationalError as exc:
            if attempt == attempts - 1 or not _retryable(exc) or transaction.get_connection().in_atomic_block:
                raise
            time.sleep(base_delay * (2**attempt) * (1 + random.random()))
    raise AssertionError("unreachable")
