"""Counting summary runs per workspace and minute, by outcome, for the dashboard's chart over time.

`run_count_add` is one `INSERT ... ON CONFLICT DO UPDATE` adding to the minute's row, so concurrent
runs of different layers lose nothing. Bookkeeping never fails a run: a database error here is
logged and dropped (the run's own outcome, or its exception, is what the caller sees).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.db import DatabaseError, connection, transaction

from apps.summaries.models import SummaryRunCount

log = logging.getLogger(__name__)

OUTCOMES = ("generated", "skipped", "empty", "failed")
COLUMNS = (*OUTCOMES, "marked_stale")  # what a minute's row counts


def minute_of(moment: datetime) -> datetime:
    """The start of `moment`'s UTC minute."""
    return datetime.fromtimestamp(moment.timestamp() // 60 * 60, tz=UTC)


def run_count_add(*, workspace_id: int, at: datetime, outcome: str, marked_stale: int = 0) -> None:
    """Count one run of `outcome` (one of OUTCOMES) in the minute of `at`, and the summaries it left stale."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown summary run outcome {outcome!r}")
    table = SummaryRunCount._meta.db_table
    added = [int(outcome == name) for name in OUTCOMES]
    columns = ", ".join(OUTCOMES)
    updates = ", ".join(f"{name} = {table}.{name} + EXCLUDED.{name}" for name in (*OUTCOMES, "marked_stale"))
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (workspace_id, minute, {columns}, marked_stale) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) "
                f"ON CONFLICT (workspace_id, minute) DO UPDATE SET {updates}",
                [workspace_id, minute_of(at), *added, marked_stale],
            )
    except DatabaseError:
        log.exception("workspace %s: counting a %s summary run failed", workspace_id, outcome)


def run_counts_binned(*, workspace_id: int, start: datetime, step: timedelta) -> list[tuple[int, ...]]:
    """(bucket start in unix seconds, *COLUMNS summed) of the workspace's runs since `start`, in buckets
    of `step` aligned on the epoch (one indexed query, bucketed by PostgreSQL's `date_bin`)."""
    sums = ", ".join(f"sum({name})" for name in COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT extract(epoch FROM date_bin(%s::interval, minute, 'epoch'::timestamptz))::bigint, {sums} "
            f"FROM {SummaryRunCount._meta.db_table} WHERE workspace_id = %s AND minute >= %s GROUP BY 1",
            [f"{int(step.total_seconds())} seconds", workspace_id, start],
        )
        return [tuple(int(value or 0) for value in row) for row in cursor.fetchall()]
