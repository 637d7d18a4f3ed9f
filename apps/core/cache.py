"""The one module that talks to the cache (django-redis with REDIS_URL, local memory otherwise).

Cache failures never fail a request: a broken cache behaves as an empty one.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache as _cache
from django.core.cache import caches

log = logging.getLogger(__name__)


def get_bytes(key: str) -> bytes | None:
    try:
        value: Any = _cache.get(key)
    except Exception:  # noqa: BLE001 - a cache outage must not fail the hot path
        log.warning("cache get failed for %s", key, exc_info=True)
        return None
    return value if isinstance(value, bytes) else None


def set_bytes(key: str, value: bytes, timeout: int) -> None:
    try:
        _cache.set(key, value, timeout)
    except Exception:  # noqa: BLE001
        log.warning("cache set failed for %s", key, exc_info=True)


def get_value(key: str) -> Any:
    """A cached JSON-like value, or None."""
    try:
        return _cache.get(key)
    except Exception:  # noqa: BLE001
        log.warning("cache get failed for %s", key, exc_info=True)
        return None


def set_value(key: str, value: Any, timeout: int) -> None:
    try:
        _cache.set(key, value, timeout)
    except Exception:  # noqa: BLE001
        log.warning("cache set failed for %s", key, exc_info=True)


# --- Counters (rate limits) in their own cache alias, "ratelimit" ---------------------------------


def counter_incr(key: str, timeout: int) -> int | None:
    """Add one to a counter that expires `timeout` s after its first hit; None when the cache fails.

    Atomic on both backends (Redis INCR; LocMemCache holds a lock), so concurrent hits are all counted.
    """
    counters = caches["ratelimit"]
    try:
        try:
            value = counters.incr(key)
        except ValueError:  # no counter yet: the first hit of its window
            if counters.add(key, 1, timeout):
                return 1
            value = counters.incr(key)
    except Exception:  # noqa: BLE001 - a limiter whose store is down lets requests through
        log.warning("rate-limit counter failed for %s", key, exc_info=True)
        return None
    return int(value) if value is not None else None


def counter_get(key: str) -> int:
    """A counter's value (0 when missing or when the cache fails)."""
    try:
        value = caches["ratelimit"].get(key)
    except Exception:  # noqa: BLE001
        log.warning("rate-limit counter read failed for %s", key, exc_info=True)
        return 0
    return int(value) if isinstance(value, int) else 0


def counters_clear() -> None:
    """Forget every counter (tests; an operator lifting a block). Redis: only the counters' keys."""
    try:
        counters: Any = caches["ratelimit"]
        if hasattr(counters, "delete_pattern"):
            counters.delete_pattern("*")  # the alias has its own KEY_PREFIX
        else:
            counters.clear()
    except Exception:  # noqa: BLE001
        log.warning("rate-limit counters could not be cleared", exc_info=True)
