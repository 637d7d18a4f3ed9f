"""One stage's p95 over a timed run, from the assembly records the run wrote."""

from __future__ import annotations

import statistics
import time
from datetime import datetime

from apps.assembly.models import AssemblyRecord

WRITER_WAIT_S = 5.0  # records are written after the answer, in batches (record_writer.py)


def stage_p95(*, workspace_id: int, since: datetime, requests: int, stage: str) -> float | None:
    """The p95 of `stage` (ms) over the last `requests` records written since `since`; None if none timed it.

    Waits up to WRITER_WAIT_S for the records still queued in the writers.
    """
    records = AssemblyRecord.objects.filter(workspace_id=workspace_id, created_at__gte=since)
    deadline = time.monotonic() + WRITER_WAIT_S
    while records.count() < requests and time.monotonic() < deadline:
        time.sleep(0.1)
    rows = records.order_by("-pk").values_list("timings", flat=True)[:requests]
    times = sorted(float(t[stage]) for t in rows if stage in t)
    if len(times) < 2:
        return times[0] if times else None
    return statistics.quantiles(times, n=100, method="inclusive")[94]
