"""Active API keys kept in each process's memory, so a request's key costs no query.

A key is looked up on every API request; the cached entry (the key with its workspace) lives
API_KEY_CACHE_SECONDS. A revoked, changed or deleted key stops working at once in every process:
the change drops this process's entry and sets a flag in the store every worker shares (Redis,
else the table under var/ of the bad-key counters), and an entry is used only while no flag is set
for its key (a miss in that store costs ~0.1 ms on Redis, microseconds in the table; a store that
fails counts as a set flag, so the key is read from the database). A flag outlives any entry cached before it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from django.conf import settings

from apps.core import cache
from apps.workspaces.models import ApiKey

MAX_ENTRIES = 4096

_lock = threading.Lock()
_entries: OrderedDict[str, tuple[float, ApiKey]] = OrderedDict()  # key hash -> (expiry, key with workspace)


def _flag(key_hash: str) -> str:
    return f"api-key-changed:{key_hash}"


def cached_key(key_hash: str) -> ApiKey | None:
    """The cached active key with this hash, or None (not cached, expired, or changed since)."""
    with _lock:
        entry = _entries.get(key_hash)
    if entry is None:
        return None
    if entry[0] < time.monotonic() or cache.shared_flag_present(_flag(key_hash)):
        forget(key_hash)
        return None
    return entry[1]


def remember(key: ApiKey) -> None:
    """Keep an active key (fetched with its workspace) unless its hash is flagged as changed."""
    seconds = settings.API_KEY_CACHE_SECONDS
    if seconds <= 0 or not key.is_active or cache.shared_flag_present(_flag(key.key_hash)):
        return
    with _lock:
        _entries[key.key_hash] = (time.monotonic() + seconds, key)
        _entries.move_to_end(key.key_hash)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def forget(key_hash: str) -> None:
    with _lock:
        _entries.pop(key_hash, None)


def key_changed(key_hash: str) -> None:
    """A key was revoked, edited or deleted: no process uses its cached entry any more."""
    cache.shared_flag_set(_flag(key_hash), settings.API_KEY_CACHE_SECONDS + 60)
    forget(key_hash)
