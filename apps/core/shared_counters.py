"""A cache backend of integer counters and flags that every process of the machine shares, without Redis.

The rate limits' store when REDIS_URL is unset (the "ratelimit" and "ratelimit-failures" aliases,
apps/core/cache.py): a fixed table of SLOTS slots in one memory-mapped file under var/, each the
key's 16-byte digest, its expiry (epoch seconds) and its value. A key's slot is found by linear
probing from its digest, up to PROBES slots or the first never-used one (an expired or deleted slot
is free to reuse but keeps the chain going). Every operation holds an
exclusive `flock` on the file, and a lock of this process (flock excludes other open files, not other
threads using the same one), for a few microseconds: an increment is atomic across the server's
workers, and a process killed holding the lock drops it. When every probed slot is live, the one
expiring first is reused (under such a flood of distinct keys a counter may restart).
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache

SLOTS = 65_536
PROBES = 32
_SLOT = struct.Struct("<16sdq")  # digest, expiry (epoch seconds, 0 = free), value
_UNUSED = bytes(16)  # never written since the table was made or cleared: a probe stops there
_DELETED = b"\xff" * 16

_tables: dict[str, _Table] = {}
_tables_lock = threading.Lock()


class _Table:
    """One mapped file of slots, shared by the cache instances of this process that name it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        size = SLOTS * _SLOT.size
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self.fd).st_size < size:
            os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size)
        self.lock = threading.Lock()

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self.lock:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)

    def find(self, digest: bytes, now: float) -> tuple[int | None, int]:
        """(the live slot of `digest` or None, the slot to write a new entry to)."""
        start = int.from_bytes(digest[:8], "little") % SLOTS
        reuse, reuse_expiry = start, float("inf")
        for step in range(PROBES):
            slot = (start + step) % SLOTS
            found, expiry, _ = _SLOT.unpack_from(self.map, slot * _SLOT.size)
            if expiry > now and found == digest:
                return slot, slot
            if found == _UNUSED:
                return None, reuse if reuse_expiry == 0 else slot
            if expiry <= now:
                if reuse_expiry > 0:
                    reuse, reuse_expiry = slot, 0.0
            elif expiry < reuse_expiry:
                reuse, reuse_expiry = slot, expiry
        return None, reuse

    def value(self, slot: int) -> int:
        return int(_SLOT.unpack_from(self.map, slot * _SLOT.size)[2])

    def write(self, slot: int, digest: bytes, expiry: float, value: int) -> None:
        _SLOT.pack_into(self.map, slot * _SLOT.size, digest, expiry, value)

    def clear(self) -> None:
        self.map[:] = bytes(len(self.map))


def _table(path: str) -> _Table:
    with _tables_lock:
        if path not in _tables:
            _tables[path] = _Table(Path(path))
        return _tables[path]


class SharedCounterCache(BaseCache):
    """Django's cache API over the shared table, for integer values only (counters and flags).

    `LOCATION` is the file. A timeout of None keeps an entry for a year.
    """

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        self._path = location

    @property
    def _slots(self) -> _Table:
        return _table(self._path)

    def _digest(self, key: str, version: int | None) -> bytes:
        return hashlib.blake2b(self.make_and_validate_key(key, version=version).encode(), digest_size=16).digest()

    def _expiry(self, timeout: Any) -> float:
        expiry = self.get_backend_timeout(timeout)  # epoch seconds, or None: no expiry
        return time.time() + 365 * 86400 if expiry is None else float(expiry)

    @staticmethod
    def _int(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"SharedCounterCache stores integers only, not {type(value).__name__}")
        return value

    def add(self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        digest, number, table = self._digest(key, version), self._int(value), self._slots
        with table.locked():
            live, slot = table.find(digest, time.time())
            if live is not None:
                return False
            table.write(slot, digest, self._expiry(timeout), number)
            return True

    def set(self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        digest, number, table = self._digest(key, version), self._int(value), self._slots
        with table.locked():
            _, slot = table.find(digest, time.time())
            table.write(slot, digest, self._expiry(timeout), number)

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        digest, table = self._digest(key, version), self._slots
        with table.locked():
            live, _ = table.find(digest, time.time())
            return default if live is None else table.value(live)

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        digest, table = self._digest(key, version), self._slots
        with table.locked():
            live, _ = table.find(digest, time.time())
            if live is None:
                raise ValueError(f"Key '{key}' not found")
            expiry = _SLOT.unpack_from(table.map, live * _SLOT.size)[1]
            value = table.value(live) + delta
            table.write(live, digest, expiry, value)
            return value

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        digest, table = self._digest(key, version), self._slots
        with table.locked():
            live, _ = table.find(digest, time.time())
            if live is None:
                return False
            table.write(live, digest, self._expiry(timeout), table.value(live))
            return True

    def delete(self, key: str, version: int | None = None) -> bool:
        digest, table = self._digest(key, version), self._slots
        with table.locked():
            live, _ = table.find(digest, time.time())
            if live is None:
                return False
            table.write(live, _DELETED, 0.0, 0)
            return True

    def has_key(self, key: str, version: int | None = None) -> bool:
        return self.get(key, version=version) is not None

    def clear(self) -> None:
        table = self._slots
        with table.locked():
            table.clear()
