"""The dashboard's figures about background activity over time: summary runs and error-pattern hints.

Summary runs are stored by apps/summaries (`SummaryRunCount`, one row per workspace and minute) and
read here in one indexed query, bucketed by the range's step in PostgreSQL (`date_bin`). Hints
(apps/error_patterns `HintInjection`, with its `failed` outcome at `resolved_at`) are rolled up
with the assemblies (apps/web/rollup.py) and arrive here as `Hints`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from apps.summaries.models import SummaryRunCount

SUMMARY_OUTCOMES = ("generated", "skipped", "empty", "failed", "marked_stale")
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


def _interval(step: timedelta) -> str:
    return f"{int(step.total_seconds())} seconds"


def summary_runs(*, workspace_id: int, start: datetime, step: timedelta, index: Index, count: int) -> SummaryRuns:
    """The workspace's summary runs since `start`, summed per step (one query)."""
    series = {name: [0.0] * count for name in SUMMARY_OUTCOMES}
    sums = ", ".join(f"sum({name})" for name in SUMMARY_OUTCOMES)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT extract(epoch FROM date_bin(%s::interval, minute, 'epoch'::timestamptz))::bigint, {sums} "
            f"FROM {SummaryRunCount._meta.db_table} WHERE workspace_id = %s AND minute >= %s GROUP BY 1",
            [_interval(step), workspace_id, start],
        )
        for epoch, *values in cursor.fetchall():
            i = index(epoch)
            if i is not None:
                for name, value in zip(SUMMARY_OUTCOMES, values, strict=True):
                    series[name][i] += float(value or 0)
    return SummaryRuns(series=series, totals={name: int(sum(values)) for name, values in series.items()})
