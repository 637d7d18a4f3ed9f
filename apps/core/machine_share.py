"""A workspace's share of the machine across the server's worker processes (issue 26).

Each worker process hands its heavy-request slots out fairly (apps/core/fair_share.py), but a flood
reaches every worker: with one slot per worker and one worker per core, one tenant's burst ran an
assembly on every core at once, and another tenant's request, whichever worker it reached, shared
the CPU with it (bench_tenants: the victim's own work took 1.5x as long under 8 attacker clients).
So while another workspace is present on the machine, a workspace runs at most
WORKSPACE_MACHINE_MAX heavy requests on the whole machine (default: the machine's heavy slots, the
workers times WORKER_MAX_CONCURRENT, minus one): one slot's worth of the machine is always left to
the others. A workspace alone on the machine has no such cap (a lone tenant keeps every core).

Presence: a memory-mapped file under var/ with PRESENCE_SLOTS entries (a workspace id and when its
last heavy request began, by the workspace's hash); another workspace is present when one of its
entries is younger than PRESENT_SECONDS. Entries are written without a lock: a torn read can only
misjudge one request's cap.

The machine slots: WORKSPACE_MACHINE_MAX lock files per bucket of workspaces (their id modulo
BUCKETS, so the files stay few; two workspaces in one bucket share a cap), taken with a
non-blocking `flock` on a file descriptor of the request's own. The kernel drops the lock when its
holder's process dies, so a killed worker never leaves a slot taken. A request that finds none
free asks again every few milliseconds (POLL_SECONDS), holding no database connection, for as long as the process's slot
wait allows, then is refused like one that found no slot in its process (429 `overloaded`).
A directory that cannot be written turns the machine share off (logged once), never a request.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
from django.conf import settings

log = logging.getLogger(__name__)

PRESENCE_SLOTS = 512
PRESENT_SECONDS = 1.0
BUCKETS = 1024
POLL_SECONDS = (0.001, 0.008)  # a waiter asks again after 1 ms, then 1.5 times later each time, up to 8 ms
_ENTRY = np.dtype([("workspace", "<i8"), ("at", "<f8")])

_lock = threading.Lock()
_tables: dict[Path, np.ndarray | None] = {}  # None: the directory cannot be written, the share is off


def machine_max() -> int:
    """How many heavy requests one workspace may run on the machine while others are present (0: no cap)."""
    if settings.WORKSPACE_MACHINE_MAX is not None:
        return int(settings.WORKSPACE_MACHINE_MAX)
    per_worker = settings.WORKER_MAX_CONCURRENT
    if not per_worker:
        return 0
    return max(1, settings.WEB_WORKERS * per_worker - 1)


def _directory() -> Path:
    return Path(settings.MACHINE_SHARE_DIR)


def _table() -> np.ndarray | None:
    """The presence entries, mapped from the machine's file (None: the share is off)."""
    directory = _directory()
    try:
        return _tables[directory]
    except KeyError:
        pass
    with _lock:
        if directory not in _tables:
            try:
                directory.mkdir(parents=True, exist_ok=True)
                size = PRESENCE_SLOTS * _ENTRY.itemsize
                fd = os.open(directory / "presence.bin", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    if os.fstat(fd).st_size < size:
                        os.ftruncate(fd, size)
                    mapped = mmap.mmap(fd, size)
                finally:
                    os.close(fd)
                _tables[directory] = np.frombuffer(mapped, dtype=_ENTRY)
            except OSError as exc:
                log.warning("machine share off: %s cannot be used (%s)", directory, exc)
                _tables[directory] = None
        return _tables[directory]


def others_present(workspace_id: int) -> bool:
    """Note that `workspace_id` is here now; whether another workspace began a heavy request lately."""
    table = _table()
    if table is None:
        return False
    now = time.time()
    table[hash(workspace_id) % PRESENCE_SLOTS] = (workspace_id, now)
    recent = table["at"] > now - PRESENT_SECONDS
    return bool(np.any(recent & (table["workspace"] != workspace_id)))


class MachineSlot:
    """One of a workspace's machine slots, held by this request until `release`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops its flock
            self._fd = -1


def _try_take(workspace_id: int, slots: int) -> MachineSlot | None:
    bucket = workspace_id % BUCKETS
    for k in range(slots):
        fd = os.open(_directory() / f"{bucket}.{k}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return MachineSlot(fd)
    return None


def take(
    workspace_id: int, *, wait: float, before_waiting: Callable[[], None] | None = None
) -> MachineSlot | None | Literal[False]:
    """A machine slot for `workspace_id` if another workspace is present (None: no cap applies now),
    waiting at most `wait` seconds; False if none came."""
    slots = machine_max()
    if not slots or not others_present(workspace_id):
        return None
    try:
        slot = _try_take(workspace_id, slots)
        if slot is not None:
            return slot
        if before_waiting is not None:
            before_waiting()
        ends = time.monotonic() + wait
        pause = POLL_SECONDS[0]
        while time.monotonic() < ends:
            time.sleep(min(pause, max(0.0, ends - time.monotonic())))
            pause = min(pause * 1.5, POLL_SECONDS[1])
            if not others_present(workspace_id):
                return None  # the others left: no cap
            slot = _try_take(workspace_id, slots)
            if slot is not None:
                return slot
    except OSError as exc:  # the lock files cannot be opened: no cap rather than a failed request
        log.warning("machine share skipped: %s", exc)
        return None
    return False
