"""The dashboard's figures about background activity over time: summary runs and error-pattern hints.

Summary runs are stored by apps/summaries (`SummaryRunCount`, one row per workspace and minute) and
read through it in one indexed query, bucketed by the range's step (`run_counts.run_counts_binned`). Hints
(apps/error_patterns `HintInjection`, with its `failed` outcome at `resolved_at`) are rolled up
with the assemblies (apps/assembly/rollup) and arrive here as `Hints`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from apps.summaries.run_counts import COLUMNS as SUMMARY_OUTCOMES
from apps.summaries.run_counts import run_counts_binned

Index = Callable[[float], "int | None"]


@dataclass(frozen=True)
class SummaryRuns:
    """Summary runs per step by outcome (the keys of SUMMARY_OUTCOMES), and their totals over the range."""

    series: dict[str, list[float]]
    totals: dict[str, int]


@dataclass(frozen=True)
class Hints:
    """Hints injected per step (by injection time) and injections followed by a failure (by its time)."""

    injected: list[float]
    failed_after: list[float]

    @property
    def failure_rate(self) -> float | None:
        """Failures after a hint per hint injected over the range, in % (None: no hint injected)."""
        injected = sum(self.injected)
        return round(100.0 * sum(self.failed_after) / injected, 1) if injected else None


def summary_runs(*, workspace_id: int, start: datetime, step: timedelta, index: Index, count: int) -> SummaryRuns:
    """The workspace's summary runs since `start`, summed per step (one query)."""
    series = {name: [0.0] * count for name in SUMMARY_OUTCOMES}
    for epoch, *values in run_counts_binned(workspace_id=workspace_id, start=start, step=step):
        i = index(epoch)
        if i is not None:
            for name, value in zip(SUMMARY_OUTCOMES, values, strict=True):
                series[name][i] += float(value)
    return SummaryRuns(series=series, totals={name: int(sum(values)) for name, values in series.items()})
