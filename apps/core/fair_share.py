"""Fair shares of a worker process between workspaces (issue 26): one tenant's burst leaves the others'
latency alone.

Heavy requests (a context assembly, its preview, a history search) take a slot of their process for
as long as they run: at most WORKSPACE_MAX_CONCURRENT per workspace, so one workspace never holds
more than that many pooled connections (the pool has DB_POOL_MAX), and at most WORKER_MAX_CONCURRENT
in all, since they share one interpreter (and its GIL) and two cores: past a few, running more at
once only makes each slower. A freed slot goes to the waiting workspace with the fewest running, and
among equals to the one admitted longest ago (turns go round), so a tenant that sends one request at a
time is next in line however many another has queued, even when the flood's slot just freed.

A request that finds no slot waits for one at most WORKSPACE_QUEUE_MS, then answers 429 `overloaded`
with `Retry-After`. Waiting briefly, rather than refusing at once, serves a tenant's small fan-out
(an agent's few parallel calls) a little later instead of failing it; the wait is bounded, costs a
thread but no CPU and no database connection (the request gives its connection back to the pool
first), and counts in the request's deadline, which runs from its arrival. A flood is refused after
that wait. A request whose workspace is below its share waits only for the worker's total, is next
when a slot frees, and may wait UNDER_SHARE_WAIT times as long: another tenant's flood should not get
it refused (with 250 ms for all, the victim of `bench_tenants` got two 429s under a burst of 80).
Cache hits take no slot: they are cheap.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from apps.core import errors
from apps.core.db_health import note_overloaded
from apps.core.errors import TooManyRequests
from apps.metrics.registry import OVERLOADED

RETRY_AFTER_SECONDS = 1
UNDER_SHARE_WAIT = 4  # times WORKSPACE_QUEUE_MS that a workspace below its own share may wait


@dataclass(eq=False)
class _Waiter:
    workspace_id: int
    seq: int
    admitted: bool = False


class FairGate:
    """Slots of one process: `per_workspace` at most per workspace, `total` at most in all (0: no limit)."""

    def __init__(self, *, total: int, per_workspace: int) -> None:
        self.total, self.per_workspace = total, per_workspace
        self._cond = threading.Condition()
        self._running: Counter[int] = Counter()
        self._queues: dict[int, deque[_Waiter]] = {}
        self._seq = itertools.count()
        self._turns = itertools.count()
        self._last_turn: dict[int, int] = {}  # when each workspace running or waiting was last admitted

    def _room(self, workspace_id: int) -> bool:
        if self.per_workspace and self._running[workspace_id] >= self.per_workspace:
            return False
        return not self.total or self._running.total() < self.total

    def _admit(self) -> None:
        """Hand free slots to queue heads: the workspace with the fewest running first, then the one
        admitted longest ago (turns go round the workspaces: a flood's older waiters do not go before
        another tenant's one), then the oldest waiter."""
        while True:
            heads = [
                (self._running[ws], self._last_turn.get(ws, -1), q[0].seq, ws)
                for ws, q in self._queues.items()
                if self._room(ws)
            ]
            if not heads:
                return
            workspace_id = min(heads)[3]
            queue = self._queues[workspace_id]
            queue.popleft().admitted = True
            if not queue:
                del self._queues[workspace_id]
            self._running[workspace_id] += 1
            self._last_turn[workspace_id] = next(self._turns)

    def _forget(self, workspace_id: int) -> None:
        """A workspace neither running nor waiting starts afresh (first in turn when it comes back)."""
        if workspace_id not in self._running and workspace_id not in self._queues:
            self._last_turn.pop(workspace_id, None)

    def enter(self, *, workspace_id: int, wait: float, before_waiting: Callable[[], None] | None = None) -> bool:
        """Take a slot for `workspace_id`, waiting at most `wait` seconds; False if none came."""
        with self._cond:
            waiter = _Waiter(workspace_id, next(self._seq))
            self._queues.setdefault(workspace_id, deque()).append(waiter)
            self._admit()
            if waiter.admitted:
                return True
        if before_waiting is not None:
            before_waiting()
        ends = time.monotonic() + wait
        with self._cond:
            while not waiter.admitted:
                left = ends - time.monotonic()
                if left <= 0:
                    queue = self._queues[workspace_id]
                    queue.remove(waiter)
                    if not queue:
                        del self._queues[workspace_id]
                    self._forget(workspace_id)
                    return False
                self._cond.wait(left)
            return True

    def leave(self, *, workspace_id: int) -> None:
        """Give the slot back; the next waiter in fair order takes it."""
        with self._cond:
            self._running[workspace_id] -= 1
            if self._running[workspace_id] <= 0:
                del self._running[workspace_id]
            self._admit()
            self._forget(workspace_id)
            self._cond.notify_all()

    def alone(self, workspace_id: int) -> bool:
        """No other workspace runs or waits in this process."""
        with self._cond:
            return all(ws == workspace_id for ws in self._running) and all(ws == workspace_id for ws in self._queues)

    def running(self, workspace_id: int | None = None) -> int:
        with self._cond:
            return self._running.total() if workspace_id is None else self._running[workspace_id]


_gate: FairGate | None = None
_gate_lock = threading.Lock()


def gate() -> FairGate:
    """This process's gate, sized by the settings when first used (a test that changes them resets it)."""
    global _gate
    with _gate_lock:
        total, per_workspace = settings.WORKER_MAX_CONCURRENT, settings.WORKSPACE_MAX_CONCURRENT
        if _gate is None or (_gate.total, _gate.per_workspace) != (total, per_workspace):
            _gate = FairGate(total=total, per_workspace=per_workspace)
        return _gate


def _give_back_connection() -> None:
    """While it waits, the request holds no pooled connection (none may be held inside a transaction)."""
    if not connection.in_atomic_block:
        connection.close()


@contextmanager
def workspace_slot(*, workspace_id: int, what: str = "request") -> Iterator[None]:
    """Run the body in one of the process's slots for `workspace_id`; TooManyRequests (429
    `overloaded`, Retry-After) if none comes within WORKSPACE_QUEUE_MS."""
    slots = gate()
    if not (slots.total or slots.per_workspace):
        yield
        return
    wait = settings.WORKSPACE_QUEUE_MS / 1000
    if not slots.per_workspace or slots.running(workspace_id) < slots.per_workspace:
        wait *= UNDER_SHARE_WAIT  # it waits only for the worker's total, behind none of its own: it is next
    elif slots.alone(workspace_id):
        wait *= UNDER_SHARE_WAIT  # a lone tenant's burst queues behind itself only: let it, rather than refuse
    if not slots.enter(workspace_id=workspace_id, wait=wait, before_waiting=_give_back_connection):
        OVERLOADED.labels(reason="workspace_share").inc()
        note_overloaded(f"workspace {workspace_id} found no free {what} slot in {settings.WORKSPACE_QUEUE_MS} ms")
        raise TooManyRequests(
            f"this workspace already runs its share of {what}s on this worker; retry shortly",
            retry_after=RETRY_AFTER_SECONDS,
            code=errors.OVERLOADED,
        )
    try:
        yield
    finally:
        slots.leave(workspace_id=workspace_id)
