"""Where an assembly's time went, stage by stage, for its record, the console and its trace's spans."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from apps.core import telemetry

# The stages an assembly record reports, in request order (ARCHITECTURE.md describes each).
STAGES = ("resolve", "embedding", "vector_search", "keyword_search", "candidates", "ranking", "packing", "record")


@dataclass
class StageTimes:
    """Milliseconds per stage; a stage timed twice adds up, a stage never run is absent."""

    ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as `name`; with tracing on, it is also a child span of the current operation."""
        span = telemetry.stage_started(name)
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - started) * 1000)
            if span is not None:
                span.end()

    def add(self, name: str, ms: float) -> None:
        self.ms[name] = self.ms.get(name, 0.0) + ms

    def rounded(self) -> dict[str, float]:
        return {name: round(ms, 2) for name, ms in self.ms.items()}
