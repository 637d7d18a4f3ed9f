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
The context and preview APIs take the slot right after authentication, so validation, the assembly,
its record and the answer's serialization all run in it: a request waiting for its turn costs no
interpreter time, which the running one would otherwise share (bench_tenants under 8 attacker clients,
alternating in one session: the victim's server p95 60-112 ms with the slot around the assembly only,
45-52 ms with it around the request). Elsewhere (MCP, WebSocket) the slot covers the assembly, and a
cache hit takes none.

A running request also gives its slot up between stages (`Slot.checkpoint`, asked wherever the
request's deadline is: before each search, source and ranking, and before each candidate packed) to a
waiting workspace that has used the process's slots less lately: slot time is charged to each
workspace and halves every USAGE_HALF_LIFE seconds, and a waiter whose workspace used at least
SLICE_SECONDS less goes first. So a tenant that sends a request now and then waits for the stage a
flood's assembly is in, not for the whole assembly (two equal floods alternate about every
SLICE_SECONDS). The paused request keeps its database connection and its place at the head of its
workspace's queue (it counts in its workspace's share while paused, not in the process's total),
and goes on when its turn comes; it is never refused.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NoReturn

from django.conf import settings
from django.db import connection

from apps.core import errors, machine_share, server_timing
from apps.core.db_health import note_overloaded
from apps.core.errors import TooManyRequests
from apps.metrics.registry import OVERLOADED

RETRY_AFTER_SECONDS = 1
UNDER_SHARE_WAIT = 4  # times WORKSPACE_QUEUE_MS that a workspace below its own share may wait
USAGE_HALF_LIFE = 2.0  # seconds: a workspace's slot time counts half after this long
SLICE_SECONDS = 0.01  # a waiter goes before a running request whose workspace used this much more


@dataclass(eq=False)
class _Waiter:
    workspace_id: int
    seq: int
    admitted: bool = False
    paused: bool = False  # gave its slot up between stages; goes on when admitted again


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
        self._paused: Counter[int] = Counter()  # requests that gave their slot up and wait to go on
        self._usage: dict[int, tuple[float, float]] = {}  # slot seconds (decaying), as of monotonic time

    def _room(self, waiter: _Waiter) -> bool:
        """Whether `waiter` may run now: a paused request holds its workspace's share already."""
        workspace_id = waiter.workspace_id
        if (
            not waiter.paused
            and self.per_workspace
            and self._running[workspace_id] + self._paused[workspace_id] >= self.per_workspace
        ):
            return False
        return not self.total or self._running.total() < self.total

    def _used(self, workspace_id: int, now: float) -> float:
        """The workspace's slot seconds, each counting half after USAGE_HALF_LIFE."""
        used, at = self._usage.get(workspace_id, (0.0, now))
        return used * 0.5 ** ((now - at) / USAGE_HALF_LIFE)

    def _charge(self, workspace_id: int, seconds: float, now: float) -> None:
        self._usage[workspace_id] = (self._used(workspace_id, now) + seconds, now)
        if len(self._usage) > 4096:  # forget the workspaces whose use has faded
            self._usage = {ws: (u, at) for ws, (u, at) in self._usage.items() if self._used(ws, now) > 1e-3}

    def _admit(self) -> None:
        """Hand free slots to queue heads: the workspace with the fewest running first, then the one
        admitted longest ago (turns go round the workspaces: a flood's older waiters do not go before
        another tenant's one), then the oldest waiter."""
        now = time.monotonic()
        while True:
            heads = [
                (self._running[ws], int(self._used(ws, now) / SLICE_SECONDS), self._last_turn.get(ws, -1), q[0].seq, ws)
                for ws, q in self._queues.items()
                if self._room(q[0])
            ]
            if not heads:
                return
            workspace_id = min(heads)[-1]
            queue = self._queues[workspace_id]
            waiter = queue.popleft()
            waiter.admitted = True
            if waiter.paused:
                self._paused[workspace_id] -= 1
                if self._paused[workspace_id] <= 0:
                    del self._paused[workspace_id]
            if not queue:
                del self._queues[workspace_id]
            self._running[workspace_id] += 1
            self._last_turn[workspace_id] = next(self._turns)

    def _forget(self, workspace_id: int) -> None:
        """A workspace neither running nor waiting starts afresh (first in turn when it comes back)."""
        if workspace_id not in self._running and workspace_id not in self._queues and workspace_id not in self._paused:
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

    def checkpoint(self, *, workspace_id: int, since: float) -> float:
        """Between two stages of a request running since `since` (monotonic): if a waiting workspace
        has used the slots at least SLICE_SECONDS less than this one (this run included), give the slot
        up, wait at the head of this workspace's queue until admitted again, and return when this run
        goes on (the new `since`); else return `since` at once."""
        if not self._queues:  # nobody waits: the usual case, read without the lock
            return since
        with self._cond:
            now = time.monotonic()
            mine = self._used(workspace_id, now) + (now - since)
            if not any(
                ws != workspace_id and self._used(ws, now) + SLICE_SECONDS < mine
                for ws, queue in self._queues.items()
                if self._room_if_left(queue[0], workspace_id)
            ):
                return since
            self._charge(workspace_id, now - since, now)
            waiter = _Waiter(workspace_id, next(self._seq), paused=True)
            self._queues.setdefault(workspace_id, deque()).appendleft(waiter)
            self._paused[workspace_id] += 1
            self._running[workspace_id] -= 1
            if self._running[workspace_id] <= 0:
                del self._running[workspace_id]
            self._admit()
            self._cond.notify_all()
            while not waiter.admitted:
                self._cond.wait()
            return time.monotonic()

    def _room_if_left(self, waiter: _Waiter, leaving: int) -> bool:
        """Whether `waiter` could run once a request of workspace `leaving` gave its slot up."""
        self._running[leaving] -= 1
        try:
            return self._room(waiter)
        finally:
            self._running[leaving] += 1

    def leave(self, *, workspace_id: int, since: float | None = None) -> None:
        """Give the slot back (charging the time since `since` to the workspace); the next waiter in
        fair order takes it."""
        with self._cond:
            if since is not None:
                self._charge(workspace_id, time.monotonic() - since, time.monotonic())
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

    def waiting(self, workspace_id: int) -> int:
        """Requests of the workspace waiting for a slot, paused ones included."""
        with self._cond:
            return len(self._queues.get(workspace_id, ()))

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


class Slot:
    """A request's hold on its process's slot. `between_stages(cancelled)` is the request's check
    between stages: it lets a waiting workspace that used the slots less go first (FairGate.checkpoint),
    then asks `cancelled`."""

    def __init__(self, slots: FairGate | None, workspace_id: int) -> None:
        self._slots, self.workspace_id = slots, workspace_id
        self.since = time.monotonic()  # when this run in the slot began (again, after a pause)
        self.paused = 0.0  # seconds spent paused for other workspaces

    def checkpoint(self) -> None:
        if self._slots is None:
            return
        before = time.monotonic()
        since = self._slots.checkpoint(workspace_id=self.workspace_id, since=self.since)
        if since != self.since:
            self.paused += since - before
            self.since = since

    def between_stages(self, cancelled: Callable[[], bool] | None) -> Callable[[], bool]:
        def check() -> bool:
            self.checkpoint()
            return cancelled is not None and cancelled()

        return check


_held: ContextVar[Slot | None] = ContextVar("fair_share_slot", default=None)


def checkpoint() -> None:
    """Between two stages of the current request: let a waiting workspace that used the slots less go
    first (Slot.checkpoint); nothing if the request holds no slot."""
    held = _held.get()
    if held is not None:
        held.checkpoint()


@contextmanager
def workspace_slot(*, workspace_id: int, what: str = "request") -> Iterator[Slot]:
    """Run the body in one of the process's slots for `workspace_id`; TooManyRequests (429
    `overloaded`, Retry-After) if none comes within WORKSPACE_QUEUE_MS. The body may give the slot up
    between its stages through the Slot it is given (`between_stages`, or `checkpoint()`). Inside a
    body holding the workspace's slot already (the context API's view holds it around the assembly's
    own), it runs in that slot."""
    held = _held.get()
    if held is not None and held.workspace_id == workspace_id:  # the request holds one already
        yield held
        return
    slots = gate()
    if not (slots.total or slots.per_workspace):
        yield Slot(None, workspace_id)
        return
    wait = settings.WORKSPACE_QUEUE_MS / 1000
    asked = time.perf_counter()
    if not slots.per_workspace or slots.running(workspace_id) < slots.per_workspace:
        wait *= UNDER_SHARE_WAIT  # it waits only for the worker's total, behind none of its own: it is next
    elif slots.alone(workspace_id):
        wait *= UNDER_SHARE_WAIT  # a lone tenant's burst queues behind itself only: let it, rather than refuse
    machine = machine_share.take(workspace_id, wait=wait, before_waiting=_give_back_connection)
    if machine is False:
        _refuse(workspace_id, what, where="machine", reason="machine_share")
    waited = time.perf_counter() - asked
    try:
        if not slots.enter(
            workspace_id=workspace_id, wait=max(0.0, wait - waited), before_waiting=_give_back_connection
        ):
            _refuse(workspace_id, what, where="worker", reason="workspace_share")
        admitted = time.perf_counter()
        server_timing.note("slot-wait", (admitted - asked) * 1000)
        slot = Slot(slots, workspace_id)
        token = _held.set(slot)
        try:
            yield slot
        finally:
            _held.reset(token)
            slots.leave(workspace_id=workspace_id, since=slot.since)
            server_timing.note("slot", (time.perf_counter() - admitted - slot.paused) * 1000)
            server_timing.note("slot-paused", slot.paused * 1000)
    finally:
        if machine is not None:
            machine.release()


def _refuse(workspace_id: int, what: str, *, where: str, reason: str) -> NoReturn:
    OVERLOADED.labels(reason=reason).inc()
    note_overloaded(
        f"workspace {workspace_id} found no free {what} slot on its {where} in {settings.WORKSPACE_QUEUE_MS} ms"
    )
    raise TooManyRequests(
        f"this workspace already runs its share of {what}s on this {where}; retry shortly",
        retry_after=RETRY_AFTER_SECONDS,
        code=errors.OVERLOADED,
    )
