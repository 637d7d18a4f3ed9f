"""The one module that talks to the cache (django-redis with REDIS_URL, local memory otherwise).

Cache failures never fail a request: a broken cache behaves as an empty one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Any

from django.core.cache import cache as _cache
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

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


# --- Immutable objects (the assembly cache's finished answers) ------------------------------------
# With Redis they are pickled like any value (every process shares them). In local memory, where
# only this process can see them anyway, LocMemCache would still pickle on every set and unpickle on
# every get: 1.1 ms to store one 4,000-token answer of 95 chunks. They are kept by reference instead,
# which is safe only for values nobody can change (frozen dataclasses of tuples, strings, numbers).
OBJECTS_MAX = 300  # LocMemCache's default MAX_ENTRIES: the same bound on what a process holds


class _Objects:
    """A bounded, expiring map of this process's objects, the least recently used dropped first."""

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def get(self, key: str) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= time.monotonic():
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def set(self, key: str, value: Any, timeout: int) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic() + timeout, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def delete_prefix(self, prefix: str) -> int:
        with self._lock:
            keys = [key for key in self._entries if key.startswith(prefix)]
            for key in keys:
                del self._entries[key]
        return len(keys)


_objects = _Objects(OBJECTS_MAX)


def _in_memory() -> bool:
    return isinstance(caches["default"], LocMemCache)


def get_object(key: str) -> Any:
    """A cached immutable object, or None (by reference in local memory, unpickled from Redis)."""
    return _objects.get(key) if _in_memory() else get_value(key)


def set_object(key: str, value: Any, timeout: int) -> None:
    """Cache an object nobody can change: its caller and every later reader share it in local memory."""
    if _in_memory():
        _objects.set(key, value, timeout)
    else:
        set_value(key, value, timeout)


def delete_prefix(prefix: str) -> int:
    """Delete every entry whose key starts with `prefix` (objects and values); how many were found.

    In local memory only this process's entries can be reached (each process keeps its own)."""
    if _in_memory():
        return _objects.delete_prefix(prefix)
    try:
        backend: Any = _cache
        return int(backend.delete_pattern(f"{prefix}*") or 0) if hasattr(backend, "delete_pattern") else 0
    except Exception:  # noqa: BLE001
        log.warning("cache delete failed for %s*", prefix, exc_info=True)
        return 0


def objects_clear() -> None:
    """Forget this process's cached objects (tests)."""
    _objects.clear()


# --- Counters (rate limits) in their own cache aliases --------------------------------------------
# "ratelimit": request rates; "ratelimit-failures": bad keys and wrong passwords. Both in Redis, else
# in one table in a file every process of the machine maps (apps/core/shared_counters.py: a few
# microseconds an operation), so N server workers do not allow N times the rate or the attempts.
REQUESTS = "ratelimit"
FAILURES = "ratelimit-failures"


def counter_incr(key: str, timeout: int, *, alias: str = REQUESTS) -> int | None:
    """Add one to a counter that expires `timeout` s after its first hit; None when the cache fails.

    Atomic on Redis (INCR) and in the shared table (an flock around each operation).
    """
    counters = caches[alias]
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


def counter_get(key: str, *, alias: str = REQUESTS) -> int:
    """A counter's value (0 when missing or when the cache fails)."""
    try:
        value = caches[alias].get(key)
    except Exception:  # noqa: BLE001
        log.warning("rate-limit counter read failed for %s", key, exc_info=True)
        return 0
    return int(value) if isinstance(value, int) else 0


def counters_clear() -> None:
    """Forget every counter (tests; an operator lifting a block). Redis: only the counters' keys."""
    for alias in (REQUESTS, FAILURES):
        try:
            counters: Any = caches[alias]
            if hasattr(counters, "delete_pattern"):
                counters.delete_pattern("*")  # the alias has its own KEY_PREFIX
            else:
                counters.clear()
        except Exception:  # noqa: BLE001
            log.warning("rate-limit counters %s could not be cleared", alias, exc_info=True)


# --- Flags every process of the deployment sees at once (the FAILURES store: Redis, else the table) --


def shared_flag_set(key: str, timeout: int) -> None:
    try:
        caches[FAILURES].set(key, 1, timeout)
    except Exception:  # noqa: BLE001
        log.warning("shared flag %s could not be set", key, exc_info=True)


def shared_flag_present(key: str) -> bool:
    """Whether the flag is set; True when the store fails (a caller trusts its own memory only on a clear no)."""
    try:
        return caches[FAILURES].get(key) is not None
    except Exception:  # noqa: BLE001
        log.warning("shared flag %s could not be read", key, exc_info=True)
        return True
