"""The rollup's writes: add the settled records, reports and hints after each watermark to the
buckets, and move the watermarks (the periodic task `rollup_assemblies` runs `rollup_catch_up`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from apps.assembly.models import (
    AssemblyRecord,
    AssemblyRollup,
    AssemblyRollupCount,
    RecordOrigin,
    RollupWatermark,
    Span,
)
from apps.assembly.rollup.selectors import (
    CONSUMPTION_WATERMARK,
    HINT_FAILURES_WATERMARK,
    HINTS_WATERMARK,
    WATERMARK,
    consumption_rows,
)
from apps.assembly.rollup.sums import (
    FIELDS,
    MINUTES_KEPT_HOURS,
    SUM_FIELDS,
    Key,
    MinuteSums,
    consumption_sums,
    hint_sums,
    rollup_sums,
)
from apps.error_patterns.selectors import hint_events

SETTLE_SECONDS = 30
BATCH = 20_000


def rollup_advance(*, batch: int = BATCH, now: datetime | None = None) -> int:
    """Add the next settled records to the rollups; returns how many were added (0: up to date)."""
    cutoff = (now or timezone.now()) - timedelta(seconds=SETTLE_SECONDS)
    with transaction.atomic():
        RollupWatermark.objects.get_or_create(name=WATERMARK)
        mark = RollupWatermark.objects.select_for_update().get(name=WATERMARK)
        # Page runs (previews, compares, replays) are not agent traffic: the rollups never count them.
        fetched = list(
            AssemblyRecord.objects.filter(id__gt=mark.last_id, origin=RecordOrigin.AGENT)
            .order_by("id")
            .values_list(*FIELDS)[:batch]
        )
        rows = []
        for row in fetched:
            if row[2] >= cutoff:
                break  # this one and everything after it wait for the next run
            rows.append(row)
        if rows:
            _upsert(rollup_sums(rows))
            mark.last_id = rows[-1][0]
            mark.save(update_fields=["last_id", "updated_at"])
        _rollup_consumption(cutoff=cutoff)  # these two move with time, whether assemblies came or not
        _rollup_hints(cutoff=cutoff)
        old = cutoff - timedelta(hours=MINUTES_KEPT_HOURS)
        AssemblyRollup.objects.filter(span=Span.MINUTE, bucket__lt=old).delete()
        AssemblyRollupCount.objects.filter(span=Span.MINUTE, bucket__lt=old).delete()
    return len(rows)


def rollup_catch_up(*, batch: int = BATCH) -> int:
    """Run `rollup_advance` until it is up to date (the periodic task and the benchmark call this)."""
    total = 0
    while added := rollup_advance(batch=batch):
        total += added
    return total


def _rollup_consumption(*, cutoff: datetime) -> None:
    """Consumption reports come after the assembly, so they have their own watermark: report time."""
    RollupWatermark.objects.get_or_create(name=CONSUMPTION_WATERMARK)
    mark = RollupWatermark.objects.select_for_update().get(name=CONSUMPTION_WATERMARK)
    rows = consumption_rows(after=mark.last_at, until=cutoff)
    if rows:
        _upsert(consumption_sums(rows))
    mark.last_at = cutoff
    mark.save(update_fields=["last_at", "updated_at"])


def _rollup_hints(*, cutoff: datetime) -> None:
    marks = {}
    for name in (HINTS_WATERMARK, HINT_FAILURES_WATERMARK):
        RollupWatermark.objects.get_or_create(name=name)
        marks[name] = RollupWatermark.objects.select_for_update().get(name=name)
    rows = hint_events(
        injected_after=marks[HINTS_WATERMARK].last_at, failed_after=marks[HINT_FAILURES_WATERMARK].last_at, until=cutoff
    )
    if rows:
        _upsert(hint_sums(rows))
    for mark in marks.values():
        mark.last_at = cutoff
        mark.save(update_fields=["last_at", "updated_at"])


def _upsert(sums: dict[Key, MinuteSums]) -> None:
    rollups = AssemblyRollup._meta.db_table
    counts = AssemblyRollupCount._meta.db_table
    keys = list(sums)
    columns = ", ".join(SUM_FIELDS)
    additions = ", ".join(f"{name} = {rollups}.{name} + EXCLUDED.{name}" for name in SUM_FIELDS)
    casts = ["bigint[]"] * (len(SUM_FIELDS) - 1) + ["float8[]"]
    unnests = ", ".join(f"%s::{cast}" for cast in casts)
    count_rows = [
        (workspace_id, span, bucket, dimension, key, value)
        for (workspace_id, span, bucket), s in sums.items()
        for (dimension, key), value in s.counts.items()
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {rollups} (workspace_id, span, bucket, {columns}) "
            f"SELECT * FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], {unnests}) "
            f"ON CONFLICT (workspace_id, span, bucket) DO UPDATE SET {additions}",
            [
                [k[0] for k in keys],
                [str(k[1]) for k in keys],
                [k[2] for k in keys],
                *([sums[k].values[name] for k in keys] for name in SUM_FIELDS),
            ],
        )
        cursor.execute(
            f"INSERT INTO {counts} (workspace_id, span, bucket, dimension, key, value) "
            "SELECT * FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], %s::text[], %s::text[], %s::bigint[]) "
            f"ON CONFLICT (workspace_id, span, bucket, dimension, key) "
            f"DO UPDATE SET value = {counts}.value + EXCLUDED.value",
            [[str(v) if i == 1 else v for v in column] for i, column in enumerate(zip(*count_rows, strict=True))]
            if count_rows
            else [[]] * 6,
        )
