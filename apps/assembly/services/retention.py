"""Retention of assembly records: each workspace keeps its records (request, figures, trace) for
`records_retention_days` (0: forever); the dashboard's rollups outlive them.

A record goes only once the rollup has read it (its id is at most the rollup's watermark) and any
consumption report on it has been rolled up too, so sweeping never changes a figure the dashboard
shows. The sweep deletes in batches of short transactions (no long lock on the table) and is run
hourly (CELERY_BEAT_SCHEDULE `expire-assembly-records`).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from apps.assembly.rollup.selectors import watermarks
from apps.workspaces.selectors import workspaces_retention

log = logging.getLogger(__name__)

BATCH = 5_000

_EXPIRE_SQL = """
DELETE FROM assembly_assemblyrecord WHERE id IN (
    SELECT id FROM assembly_assemblyrecord
    WHERE workspace_id = %(workspace)s AND created_at < %(before)s AND id <= %(rolled_up)s
      AND (consumption_reported_at IS NULL OR consumption_reported_at <= %(reports_rolled_up)s)
    ORDER BY id LIMIT %(batch)s
)
"""


def records_expire(*, now: datetime | None = None, batch: int = BATCH) -> int:
    """Delete every workspace's records past its retention that the rollups hold; returns how many."""
    now = now or timezone.now()
    marks = watermarks()
    if marks.last_id == 0:
        return 0  # nothing rolled up yet: nothing may go
    reports_rolled_up = marks.consumption or datetime.min.replace(tzinfo=now.tzinfo)
    total = 0
    for workspace_id, days in workspaces_retention():
        if days <= 0:
            continue
        params: dict[str, int | datetime] = {
            "workspace": workspace_id,
            "before": now - timedelta(days=days),
            "rolled_up": marks.last_id,
            "reports_rolled_up": reports_rolled_up,
            "batch": batch,
        }
        while True:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(_EXPIRE_SQL, params)
                deleted = cursor.rowcount
            total += deleted
            if deleted < batch:
                break
    if total:
        log.info("assembly records past their workspace's retention: %d deleted", total)
    return total
