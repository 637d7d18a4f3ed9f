"""Reads: an estimated family's calibration in a workspace, and the estimates' error per model."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.db import connection

from apps.core.tokenizer.estimates import WINDOW_CALLS, Estimate, calibrate
from apps.tokens.models import TokenObservation

CALIBRATION_SECONDS = 60.0  # a process re-reads a workspace's calibration at most this often
_cache: dict[tuple[int, str], tuple[float, Estimate]] = {}
_lock = threading.Lock()


def estimate_for(*, workspace_id: int, family: str) -> Estimate:
    """The workspace's calibrated estimate of `family` (one query a minute per process and family)."""
    key = (workspace_id, family)
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    rows = TokenObservation.objects.filter(workspace_id=workspace_id, family=family, base_tokens__gt=0)
    pairs = rows.order_by("-id").values_list("reported", "base_tokens")[:WINDOW_CALLS]
    estimate = calibrate(family, [reported / base for reported, base in pairs])
    with _lock:
        _cache[key] = (now + CALIBRATION_SECONDS, estimate)
    return estimate


def estimate_forget(*, workspace_id: int, family: str) -> None:
    """Drop the process's cached calibration (a new observation is read on the next call)."""
    with _lock:
        _cache.pop((workspace_id, family), None)


@dataclass(frozen=True)
class ModelError:
    """How far our counts of one model were from what its upstream reported."""

    model: str
    estimated: bool
    calls: int
    error_p50: float  # reported / ours - 1, median
    error_p95: float


_ERRORS = """
SELECT model, family <> '' AS estimated, count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY reported::float8 / greatest(counted, 1) - 1),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY reported::float8 / greatest(counted, 1) - 1)
FROM tokens_tokenobservation WHERE workspace_id = %s GROUP BY model, family <> '' ORDER BY count(*) DESC, model
LIMIT 200
"""


def token_errors(*, workspace_id: int) -> list[ModelError]:
    """Per model: the calls observed and the p50 / p95 of (reported / our count - 1)."""
    with connection.cursor() as cursor:
        cursor.execute(_ERRORS, [workspace_id])
        rows = cursor.fetchall()
    return [
        ModelError(model=m, estimated=bool(e), calls=n, error_p50=round(p50, 4), error_p95=round(p95, 4))
        for m, e, n, p50, p95 in rows
    ]
