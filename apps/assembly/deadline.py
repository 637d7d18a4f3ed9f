"""Latency control (seed 000): assembly checks a deadline between stages and returns what is ready.

Stages that would start after the deadline are skipped; database searches run with a statement
timeout of the time left. The skipped stages are named, so the response can say what is missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# However late a request is, keyword search gets this long: without it there is nothing to return.
KEYWORD_FLOOR_MS = 100


@dataclass
class Deadline:
    limit_ms: int | None  # None: no deadline
    started: float = field(default_factory=time.perf_counter)
    skipped: list[str] = field(default_factory=list)

    def remaining_ms(self) -> int | None:
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
