"""The one module that talks to the cache (django-redis with REDIS_URL, local memory otherwise).

Cache failures never fail a request: a broken cache behaves as an empty one.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache as _cache

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
