"""Reads of the rollups for the dashboard: the watermarks, the bucket rows of a range, and the rows
not rolled up yet (the tails after each watermark), each one indexed query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import F, Func

from apps.assembly.models import AssemblyRecord, AssemblyRollup, AssemblyRollupCount, RecordOrigin, RollupWatermark
from apps.assembly.rollup.sums import FIELDS, SUM_FIELDS

WATERMARK = "assemblies"
CONSUMPTION_WATERMARK = "consumption"
HINTS_WATERMARK = "hints"  # injections, by created_at
HINT_FAILURES_WATERMARK = "hint-failures"  # failures after a hint, by resolved_at


@dataclass(frozen=True)
class Watermarks:
    """How far each rollup has read (one query): the dashboard reads the rest from the source rows."""

    last_id: int
    consumption: datetime | None
    hints: datetime | None
    hint_failures: datetime | None


def watermarks() -> Watermarks:
    found = {
        name: (last_id, last_at)
        for name, last_id, last_at in RollupWatermark.objects.filter(
            name__in=[WATERMARK, CONSUMPTION_WATERMARK, HINTS_WATERMARK, HINT_FAILURES_WATERMARK]
        ).values_list("name", "last_id", "last_at")
    }
    return Watermarks(
        last_id=found.get(WATERMARK, (0, None))[0] or 0,
        consumption=found.get(CONSUMPTION_WATERMARK, (0, None))[1],
        hints=found.get(HINTS_WATERMARK, (0, None))[1],
        hint_failures=found.get(HINT_FAILURES_WATERMARK, (0, None))[1],
    )


def rollup_rows(*, workspace_id: int, span: str, start: datetime) -> list[tuple[Any, ...]]:
    """(bucket as unix seconds, *SUM_FIELDS) of the workspace's buckets of `span` from `start`: one row
    per chart step, the range's span being its step."""
    columns = ", ".join(SUM_FIELDS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT extract(epoch FROM bucket)::bigint, {columns} "
            f"FROM {AssemblyRollup._meta.db_table} WHERE workspace_id = %s AND span = %s AND bucket >= %s",
            [workspace_id, span, start],
        )
        return list(cursor.fetchall())


def rollup_counts(*, workspace_id: int, span: str, start: datetime) -> list[tuple[Any, ...]]:
    """(bucket as unix seconds, dimension, key, value) of the workspace's breakdowns of `span` from `start`."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT extract(epoch FROM bucket)::bigint, dimension, key, value "
            f"FROM {AssemblyRollupCount._meta.db_table} WHERE workspace_id = %s AND span = %s AND bucket >= %s",
            [workspace_id, span, start],
        )
        return list(cursor.fetchall())


def records_tail(*, workspace_id: int, since: datetime, after_id: int) -> list[tuple[Any, ...]]:
    """The workspace's agents' records not rolled up yet (id after the watermark) since `since` (one query)."""
    return list(
        AssemblyRecord.objects.filter(
            workspace_id=workspace_id, created_at__gte=since, id__gt=after_id, origin=RecordOrigin.AGENT
        )
        .order_by()
        .values_list(*FIELDS)
    )


def consumption_rows(
    *, after: datetime | None, until: datetime | None = None, workspace_id: int | None = None
) -> list[tuple[Any, ...]]:
    """(workspace id, reported at, used, injected) of the assemblies reported after `after`."""
    records = AssemblyRecord.objects.filter(consumption_reported_at__isnull=False)
    if after is not None:
        records = records.filter(consumption_reported_at__gt=after)
    if until is not None:
        records = records.filter(consumption_reported_at__lte=until)
    if workspace_id is not None:
        records = records.filter(workspace_id=workspace_id)
    return list(
        records.order_by()
        .annotate(
            used=Func(F("used_packages"), function="cardinality"),
            injected=Func(F("injected_packages"), function="cardinality"),
        )
        .values_list("workspace_id", "consumption_reported_at", "used", "injected")
    )
