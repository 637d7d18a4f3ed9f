"""Latency control: work checks a deadline between stages and returns what is ready.

Stages that would start after the deadline are skipped; database searches run with a statement
timeout of the time left (apps/layers/hybrid_search.py). The skipped stages are named, so the
response can say what is missing. Used by assembly and by the history tool.

A cancel (the caller gave up: its client disconnected, or it asked to stop) is the deadline with
nothing left to return: every question to the deadline is a stage boundary, and once `cancelled`
is true the next one raises `Cancelled`, so the work stops there and its callers record and cache
nothing (apps/assembly/services/context.py, where it is known as `AssemblyCancelled`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


class Cancelled(Exception):
    """The caller cancelled the work; it stopped before `stage`."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"assembly cancelled before {stage}")
        self.stage = stage


@dataclass
class Deadline:
    limit_ms: int | None  # None: no deadline
    started: float = field(default_factory=time.perf_counter)
    skipped: list[str] = field(default_factory=list)
    cancelled: Callable[[], bool] | None = None  # e.g. threading.Event().is_set; None: cannot be cancelled

    def check(self, stage: str) -> None:
        """A stage boundary: raise Cancelled if the caller has cancelled."""
        if self.cancelled is not None and self.cancelled():
            raise Cancelled(stage)

    def remaining_ms(self) -> int | None:
        self.check("a search")  # every stage that consults the deadline starts here
        if self.limit_ms is None:
            return None
        return int(self.limit_ms - (time.perf_counter() - self.started) * 1000)

    def expired(self) -> bool:
        left = self.remaining_ms()
        return left is not None and left <= 0

    def skip(self, stage: str) -> None:
        self.skipped.append(stage)

    @property
    def partial(self) -> bool:
        return bool(self.skipped)
