"""The background embedder's recent throughput, for the status's ETA (`rate_note`, `rate_recent`).

Batches add what they embedded to 10-second buckets in the cache (every process and runner adds to
the same ones, so the rate is the deployment's, all concurrent batches together); the rate is what
the last minute's buckets hold over the time since the first of those batches started.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from apps.core import cache

BUCKET_SECONDS = 10
WINDOW_BUCKETS = 6
_KEY = "embedding-done:{}"
_lock = threading.Lock()


@dataclass(frozen=True)
class RecentRate:
    items_per_s: float
    tokens_per_s: float


def rate_note(*, items: int, tokens: int, started: float, seconds: float) -> None:
    """Add one embedded batch (`started`: its wall-clock start) to the current bucket. Read, add and
    write: a process's runners take turns; two processes writing at once lose one batch's sample."""
    if items < 1 or seconds <= 0:
        return
    key = _KEY.format(int(time.time() // BUCKET_SECONDS))
    with _lock:
        done = cache.get_value(key)
        items_so_far, tokens_so_far, first = done if isinstance(done, list) and len(done) == 3 else (0, 0, started)
        value = [items_so_far + items, tokens_so_far + tokens, min(first, started)]
        cache.set_value(key, value, BUCKET_SECONDS * (WINDOW_BUCKETS + 1))


def rate_recent() -> RecentRate | None:
    """Items and tokens per second over the last minute's batches, or None when none finished in it
    (no rate yet, or an embedder that has stopped: an ETA would only guess)."""
    now = time.time()
    current = int(now // BUCKET_SECONDS)
    items = tokens = 0
    first = now
    for bucket in range(current - WINDOW_BUCKETS + 1, current + 1):
        done = cache.get_value(_KEY.format(bucket))
        if isinstance(done, list) and len(done) == 3:
            items, tokens, first = items + int(done[0]), tokens + int(done[1]), min(first, float(done[2]))
    seconds = now - first
    if not items or seconds <= 0:
        return None
    return RecentRate(items_per_s=items / seconds, tokens_per_s=tokens / seconds)


def rate_forget() -> None:
    """Drop the last minute's buckets (tests)."""
    current = int(time.time() // BUCKET_SECONDS)
    for bucket in range(current - WINDOW_BUCKETS, current + 2):
        cache.set_value(_KEY.format(bucket), None, 1)
