"""Fixed-window rate limits over the cache door (Redis with REDIS_URL, so shared by every process;
otherwise a table in a file under var/ that every process of the machine maps,
apps/core/shared_counters.py).

A rate is (hits, seconds): at most `hits` in each window of `seconds` aligned on the clock. When a
window is full, the caller answers 429 with `Retry-After` = the seconds left in it. Limits that
count only failures (wrong passwords, bad API keys) are checked with `rate_blocked` before the
attempt and counted with `rate_hit` after a failure, so successes never use them up.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from apps.core import cache

Rate = tuple[int, int]


def clock() -> float:
    """Seconds since the epoch: which window a hit falls in (a test pins it to one window)."""
    return time.time()


def _key(bucket: str, ident: str, seconds: int, now: float) -> tuple[str, int]:
    """The window's counter key and the seconds left in the window (at least 1)."""
    start = int(now // seconds) * seconds
    digest = hashlib.sha256(ident.encode(errors="replace")).hexdigest()[:24]  # no usernames in Redis keys
    return f"{bucket}:{digest}:{start}", max(1, math.ceil(start + seconds - now))


def rate_hit(*, bucket: str, ident: str, rate: Rate | None, failures: bool = False) -> int | None:
    """Count one hit; None while within the rate, else the seconds until the window ends.

    `failures=True` counts in the store shared by every process even without Redis (failures are rare).
    """
    if rate is None:
        return None
    hits, seconds = rate
    key, left = _key(bucket, ident, seconds, clock())
    count = cache.counter_incr(key, timeout=seconds + 1, alias=cache.FAILURES if failures else cache.REQUESTS)
    return left if count is not None and count > hits else None


def rate_blocked(*, bucket: str, ident: str, rate: Rate | None) -> int | None:
    """Without counting a failure limit (`rate_hit(failures=True)`): None while the window has room,
    else the seconds until it ends."""
    if rate is None:
        return None
    hits, seconds = rate
    key, left = _key(bucket, ident, seconds, clock())
    return left if cache.counter_get(key, alias=cache.FAILURES) >= hits else None


def client_address(*, remote_addr: str | None, forwarded_for: str | None) -> str:
    """The client's address: REMOTE_ADDR, or with RATE_LIMIT_TRUSTED_PROXIES = n > 0 the address the
    n-th proxy from us saw in `X-Forwarded-For` (only trusted proxies append to it truthfully)."""
    proxies: int = settings.RATE_LIMIT_TRUSTED_PROXIES
    if proxies and forwarded_for:
        hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return remote_addr or "unknown"


def request_address(request: HttpRequest | Any) -> str:
    """`client_address` of a Django or DRF request."""
    meta = request.META
    return client_address(remote_addr=meta.get("REMOTE_ADDR"), forwarded_for=meta.get("HTTP_X_FORWARDED_FOR"))


def scope_address(scope: dict[str, Any]) -> str:
    """`client_address` of an ASGI scope (WebSocket, or HTTP outside Django such as /mcp/)."""
    client = scope.get("client")
    forwarded = dict(scope.get("headers", [])).get(b"x-forwarded-for")
    return client_address(
        remote_addr=str(client[0]) if client else None,
        forwarded_for=forwarded.decode(errors="replace") if forwarded else None,
    )
