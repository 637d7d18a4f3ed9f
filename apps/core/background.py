"""Background work: Celery with the Redis broker when REDIS_URL is set, else in-process after commit.

Either way a task is dispatched only after the transaction that made its work commits. In-process
mode runs tasks on one daemon worker thread per process, so a request never waits for them, and
a task given its own lane (`own_lane`: the embedding sweep, which runs as long as a backlog lasts)
on a thread of its own, so summaries and bookkeeping do not wait behind a bulk load's embedding;
pending work left by a stopped process is picked up by the next sweep (tasks are idempotent).

Dispatch never fails a request: when the broker cannot take a task (Redis down), the task runs
on the in-process thread instead and the response says so (`apps/core/degraded.py`). A write
that committed answers success, so a client never retries (and duplicates) it.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import util as mp_util
from typing import Any, cast

from django.conf import settings
from django.db import close_old_connections, connections, transaction

from apps.core import degraded

log = logging.getLogger(__name__)

_lock = threading.Lock()
_executors: dict[str, ThreadPoolExecutor] = {}  # by lane
_lanes: dict[str, str] = {}  # task name → its lane (default: "background")
_pending = 0
_queued: set[tuple[Any, ...] | None] = set()


def own_lane(task: Any, lane: str) -> None:
    """Run `task` in process on a worker thread of its own lane, apart from every other task."""
    _lanes[str(getattr(task, "name", task))] = lane


def _get_executor(lane: str = "background") -> ThreadPoolExecutor:
    with _lock:
        executor = _executors.get(lane)
        if executor is None:
            executor = _executors[lane] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"ca-{lane}")
            atexit.register(executor.shutdown, wait=True)
        return executor


def _run_inprocess(task: Any, args: tuple[Any, ...], key: tuple[Any, ...] | None = None) -> None:
    global _pending
    with _lock:
        _queued.discard(key)  # from now on a new dispatch queues again: it may bring new work
    from apps.core.periodic_runs import run_finished, run_started

    name = str(getattr(task, "name", task))
    try:
        close_old_connections()
        run_started(task=name)
        task.run(*args)
    except Exception as exc:
        log.exception("background task %s failed", name)
        run_finished(task=name, error=exc)
    else:
        run_finished(task=name)
    finally:
        connections.close_all()
        with _lock:
            _pending -= 1


BROKER_DOWN = "the background broker is unavailable; background work runs in this server process"
BROKER_RETRY_SECONDS = 5.0  # after a refusal, go straight in-process this long before trying again
_broker_down_until = 0.0


def dispatch(task: Any, *args: Any) -> None:
    """Run `task(*args)` in the background now (use `enqueue` inside a transaction)."""
    global _broker_down_until
    if settings.BACKGROUND_MODE == "celery":
        if time.monotonic() >= _broker_down_until:
            try:
                task.apply_async(args=args, retry=False)  # a dead broker fails in ~0.2 s, not after retries
                return
            except Exception:  # noqa: BLE001 - any broker failure: kombu, redis and socket errors
                log.warning("broker refused %s; running it in process", getattr(task, "name", task), exc_info=True)
                _broker_down_until = time.monotonic() + BROKER_RETRY_SECONDS
        degraded.note(BROKER_DOWN)
    _submit(task, args)


def _submit(task: Any, args: tuple[Any, ...]) -> None:
    """Queue the task on the worker thread, unless the same task with the same arguments is queued
    and not started yet: tasks are idempotent sweeps, so 2,000 writes queue one sweep, not 2,000."""
    global _pending
    key = _queue_key(task, args)
    with _lock:
        if key is not None and key in _queued:
            return
        if key is not None:
            _queued.add(key)
        _pending += 1
    _get_executor(_lanes.get(str(getattr(task, "name", task)), "background")).submit(_run_inprocess, task, args, key)


def _queue_key(task: Any, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    try:
        key = (getattr(task, "name", repr(task)), *args)
        hash(key)
    except TypeError:  # unhashable arguments (a dict of counts): never merged
        return None
    return key


# Dispatches waiting out their delay (dispatch_later), by queue key: the timer and what it dispatches.
_later: dict[tuple[Any, ...], tuple[threading.Timer, Any, tuple[Any, ...]]] = {}


def dispatch_later(task: Any, delay: float, *args: Any) -> None:
    """Dispatch `task(*args)` in `delay` seconds, once however often it is asked for meanwhile.

    For bookkeeping every request adds to (the served items' access counts): written once per
    `delay` instead of once per request, since each write costs a statement and a commit whatever
    its size. `wait_idle` and a clean exit do not wait out the delay: they run it at once.
    """
    key = _queue_key(task, args)
    if key is None:
        dispatch(task, *args)
        return
    with _lock:
        if key in _later:
            return
        timer = threading.Timer(delay, _fire, (key,))
        timer.daemon = True
        _later[key] = (timer, task, args)
    timer.start()


def _fire(key: tuple[Any, ...]) -> None:
    """Dispatch a delayed task now (its timer ran out, or someone waits for idle)."""
    with _lock:
        entry = _later.pop(key, None)
    if entry is None:
        return
    timer, task, args = entry
    timer.cancel()
    try:
        dispatch(task, *args)
    except RuntimeError:  # the interpreter is exiting and the worker takes no new work: run it here
        task.run(*args)


def _run_later_now() -> None:
    """At exit: the delayed tasks, run here (the worker thread takes no new work once exit began)."""
    with _lock:
        entries = list(_later.values())
        _later.clear()
    for timer, task, args in entries:
        timer.cancel()
        try:
            task.run(*args)
        except Exception:
            log.exception("background task %s failed at exit", getattr(task, "name", task))


atexit.register(_run_later_now)
mp_util.Finalize(None, _run_later_now, exitpriority=10)  # server workers end through multiprocessing


def enqueue(task: Any, *args: Any) -> None:
    """Dispatch `task(*args)` after the current transaction commits (immediately outside one)."""
    transaction.on_commit(lambda: dispatch(task, *args), robust=True)  # never fails the committed write


def wait_idle(timeout: float = 60.0) -> bool:
    """Block until in-process work is done (management commands and tests); True when idle.

    Delayed dispatches go now rather than after their delay."""
    for key in list(_later):
        _fire(key)
    deadline = time.monotonic() + timeout
    for _ in range(3):  # a task of one lane may queue one of another (an embedding sweep, communities)
        for executor in list(_executors.values()):
            done = threading.Event()
            executor.submit(done.set)
            if not done.wait(max(0.0, deadline - time.monotonic())):
                return False
    return True


def queue_depth() -> int:
    """Tasks waiting or running: the Celery queue length, or this process's in-process queue."""
    if settings.BACKGROUND_MODE == "celery":
        try:
            import redis

            client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1)
            # redis-py types each command `Awaitable[T] | T` (shared with its async client); this one is sync.
            return int(cast(int, client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)))
        except Exception:  # noqa: BLE001 - status must answer even when the broker does not
            log.warning("could not read the Celery queue length", exc_info=True)
            return -1
    with _lock:
        return _pending
