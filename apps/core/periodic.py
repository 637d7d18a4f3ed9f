"""Celery beat's schedule run in-process, for deployments without a broker (`make run`).

One process per data directory runs it (an exclusive `flock` on `var/beat.lock`, so several
server workers do not all sweep), on a daemon thread that dispatches each entry of
`CELERY_BEAT_SCHEDULE` through `apps.core.background` when it falls due, the first time at start.
The tasks are idempotent sweeps that lock their own rows, so an overlap is harmless anyway.
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from apps.core.background import dispatch

log = logging.getLogger(__name__)

TICK_SECONDS = 1.0


def due_entries(
    schedule: Mapping[str, Mapping[str, Any]], next_due: dict[str, float], now: float
) -> list[tuple[str, Mapping[str, Any]]]:
    """Entries due at `now` (never run counts as due); moves each one's next time forward."""
    due = []
    for name, entry in schedule.items():
        if now >= next_due.get(name, now):
            due.append((name, entry))
            next_due[name] = now + float(entry["schedule"])
    return due


def _take_lock(path: Path) -> Any | None:
    """The open lock file when this process holds the beat lock, else None."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _loop(schedule: Mapping[str, Mapping[str, Any]], handle: Any, stop: threading.Event) -> None:
    next_due: dict[str, float] = {}
    try:
        while not stop.is_set():
            for name, entry in due_entries(schedule, next_due, time.monotonic()):
                try:
                    dispatch(import_string(entry["task"]), *entry.get("args", ()))
                except Exception:
                    log.exception("periodic task %s could not be dispatched", name)
            stop.wait(TICK_SECONDS)
    finally:
        handle.close()  # releases the lock


def start_inprocess_beat(
    *,
    lock_path: Path | None = None,
    schedule: Mapping[str, Mapping[str, Any]] | None = None,
    stop: threading.Event | None = None,
) -> bool:
    """Run `schedule` (settings.CELERY_BEAT_SCHEDULE) on a daemon thread until `stop` is set,
    unless another process holds the lock; True when started here."""
    handle = _take_lock(lock_path or Path(settings.VAR_DIR) / "beat.lock")
    if handle is None:
        log.info("in-process beat: another process runs the schedule")
        return False
    schedule = settings.CELERY_BEAT_SCHEDULE if schedule is None else schedule
    thread = threading.Thread(
        target=_loop, args=(schedule, handle, stop or threading.Event()), name="ca-beat", daemon=True
    )
    thread.start()
    log.info("in-process beat: %s", ", ".join(schedule))
    return True
