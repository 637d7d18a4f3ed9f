"""Assembly records summed per workspace and minute, so the dashboard never scans the records.

`rollup_advance` reads the records after the watermark (by id, in batches), adds them to the
minute and hour rows of `AssemblyRollup` / `AssemblyRollupCount` with one additive upsert per table, and moves the
watermark, all in one transaction under the watermark's row lock (two runners never count a
record twice). Records younger than `SETTLE_SECONDS` wait for the next run: an insert that took
an id earlier but commits later must not fall behind the watermark. The dashboard adds the tail
after the watermark itself (`records_tail`), with the same `rollup_sums`.

Consumption reports and error-pattern hints come on their own time (a report, an injection, the
failure after it) and have time watermarks: `AssemblyRollupCount` rows of dimension
"consumption" (used / injected packages by report time) and "hints" (injected by injection time,
failed_after by the failure's time), moved in the same transaction on every run; a row stamped
more than SETTLE_SECONDS before its commit would fall behind them (the services stamp rows with the
time of the write). Rolled-up hints outlive their pattern (deleting a pattern deletes its
injections, not the figures of their days).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Func
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.error_patterns.models import HintInjection
from apps.layers.models import Layer
from apps.web.models import AssemblyRollup, AssemblyRollupCount, RollupWatermark, Span

WATERMARK = "assemblies"
CONSUMPTION_WATERMARK = "consumption"
HINTS_WATERMARK = "hints"  # injections, by created_at
HINT_FAILURES_WATERMARK = "hint-failures"  # failures after a hint, by resolved_at
SETTLE_SECONDS = 30
BATCH = 20_000
MINUTES_KEPT_HOURS = 2  # the dashboard reads minutes for the 1-hour range only
# Latency bins grow by 25 %: bin b holds [1.25**b, 1.25**(b+1)) ms, so a percentile read from
# the bins is within ~12 % of the true one. Below 1 ms is bin 0.
LATENCY_GROWTH = 1.25
FIELDS = (
    "id",
    "workspace_id",
    "created_at",
    "agent_type",
    "model",
    "zone",
    "elapsed_ms",
    "assembly_cache_hit",
    "embedding_cache_hit",
    "tokens_used",
    "token_budget",
    "overflow_count",
    "truncated_count",
    "chunk_tokens",
)
SUM_FIELDS = (
    "assemblies",
    "assembly_cache_hits",
    "embedding_lookups",
    "embedding_cache_hits",
    "tokens_used",
    "token_budget",
    "overflowed",
    "truncated",
    "elapsed_ms",
)


def latency_bin(elapsed_ms: float) -> int:
    return 0 if elapsed_ms < 1 else int(math.log(elapsed_ms) / math.log(LATENCY_GROWTH))


def latency_of_bin(index: int) -> float:
    """The bin's geometric middle, in ms."""
    return float(LATENCY_GROWTH ** (index + 0.5))


@dataclass
class MinuteSums:
    """What one workspace's records of one minute add up to."""

    values: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SUM_FIELDS, 0))
    counts: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))


Key = tuple[int, str, datetime]  # workspace id, span, bucket start


SPAN_SECONDS = {Span.MINUTE: 60, Span.QUARTER: 900, Span.HOUR: 3600, Span.SIX_HOURS: 21600}


def bucket_of(moment: datetime, span: str) -> datetime:
    """The start of `moment`'s bucket of this span (aligned on the Unix epoch, in UTC)."""
    size = SPAN_SECONDS[Span(span)]
    return datetime.fromtimestamp(moment.timestamp() // size * size, tz=UTC)


def rollup_sums(
    rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)
) -> dict[Key, MinuteSums]:
    """Sum records (tuples in FIELDS order) per workspace, span and bucket. One query, for layer kinds."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    layer_ids = {chunk[1] for row in rows for chunk in row[13] or ()}
    kinds = dict(Layer.objects.filter(pk__in=list(layer_ids)).values_list("pk", "kind")) if layer_ids else {}
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for (
        _id,
        workspace_id,
        created_at,
        agent_type,
        model,
        zone,
        elapsed,
        cache_hit,
        embed_hit,
        used,
        budget,
        overflow,
        truncated,
        chunks,
    ) in rows:
        for span in spans:
            if span == Span.MINUTE and created_at < minutes_from:
                continue  # minutes are read for the last hour only (and dropped after MINUTES_KEPT_HOURS)
            sums = out[(workspace_id, span, bucket_of(created_at, span))]
            v = sums.values
            v["assemblies"] += 1
            v["assembly_cache_hits"] += bool(cache_hit)
            v["embedding_lookups"] += embed_hit is not None
            v["embedding_cache_hits"] += bool(embed_hit)
            v["tokens_used"] += used
            v["token_budget"] += budget
            v["overflowed"] += overflow > 0
            v["truncated"] += truncated > 0
            v["elapsed_ms"] += elapsed
            c = sums.counts
            c[("latency_bin", str(latency_bin(elapsed)))] += 1
            c[("zone", zone or "unknown")] += 1
            c[("agent_type", agent_type or "(none)")] += 1
            c[("model", model or "(none)")] += 1
            for kind, layer_id, tokens in chunks or ():
                c[("item_kind", kind)] += tokens
                c[("layer_kind", kinds.get(layer_id, "deleted"))] += tokens
    return out


def rollup_advance(*, batch: int = BATCH, now: datetime | None = None) -> int:
    """Add the next settled records to the rollups; returns how many were added (0: up to date)."""
    cutoff = (now or timezone.now()) - timedelta(seconds=SETTLE_SECONDS)
    with transaction.atomic():
        RollupWatermark.objects.get_or_create(name=WATERMARK)
        mark = RollupWatermark.objects.select_for_update().get(name=WATERMARK)
        fetched = list(AssemblyRecord.objects.filter(id__gt=mark.last_id).order_by("id").values_list(*FIELDS)[:batch])
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


def consumption_sums(
    rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)
) -> dict[Key, MinuteSums]:
    """Used and injected packages per workspace, span and bucket of the report time."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for workspace_id, reported_at, used, injected in rows:
        for span in spans:
            if span == Span.MINUTE and reported_at < minutes_from:
                continue
            counts = out[(workspace_id, span, bucket_of(reported_at, span))].counts
            counts[("consumption", "used")] += used or 0
            counts[("consumption", "injected")] += injected or 0
    return out


def _rollup_consumption(*, cutoff: datetime) -> None:
    """Consumption reports come after the assembly, so they have their own watermark: report time."""
    RollupWatermark.objects.get_or_create(name=CONSUMPTION_WATERMARK)
    mark = RollupWatermark.objects.select_for_update().get(name=CONSUMPTION_WATERMARK)
    rows = consumption_rows(after=mark.last_at, until=cutoff)
    if rows:
        _upsert(consumption_sums(rows))
    mark.last_at = cutoff
    mark.save(update_fields=["last_at", "updated_at"])


def hint_rows(
    *,
    injected_after: datetime | None,
    failed_after: datetime | None,
    until: datetime | None = None,
    since: datetime | None = None,
    workspace_id: int | None = None,
) -> list[tuple[Any, ...]]:
    """(workspace id, "injected" | "failed_after", time) of the hints injected after `injected_after`
    and the failures after a hint reported after `failed_after`, up to `until`, from `since` (one
    query: range scans of the time indexes `hint_created` and of the partial `hint_failed_at`)."""
    table = HintInjection._meta.db_table
    selects, params = [], []
    for key, column, after, only in (
        ("injected", "created_at", injected_after, ""),
        ("failed_after", "resolved_at", failed_after, " AND failed"),
    ):
        where, args = [f"{column} IS NOT NULL{only}"], []
        for condition, value in (
            ("workspace_id = %s", workspace_id),
            (f"{column} > %s", after),
            (f"{column} <= %s", until),
            (f"{column} >= %s", since),
        ):
            if value is not None:
                where.append(condition)
                args.append(value)
        selects.append(f"SELECT workspace_id, '{key}', {column} FROM {table} WHERE {' AND '.join(where)}")
        params += args
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(selects), params)
        return list(cursor.fetchall())


def hint_sums(rows: Sequence[tuple[Any, ...]], *, spans: Sequence[str] = tuple(SPAN_SECONDS)) -> dict[Key, MinuteSums]:
    """Hints injected and failures after a hint per workspace, span and bucket."""
    minutes_from = timezone.now() - timedelta(hours=MINUTES_KEPT_HOURS)
    out: dict[Key, MinuteSums] = defaultdict(MinuteSums)
    for workspace_id, key, at in rows:
        for span in spans:
            if span == Span.MINUTE and at < minutes_from:
                continue
            out[(workspace_id, span, bucket_of(at, span))].counts[("hints", key)] += 1
    return out


def _rollup_hints(*, cutoff: datetime) -> None:
    marks = {}
    for name in (HINTS_WATERMARK, HINT_FAILURES_WATERMARK):
        RollupWatermark.objects.get_or_create(name=name)
        marks[name] = RollupWatermark.objects.select_for_update().get(name=name)
    rows = hint_rows(
        injected_after=marks[HINTS_WATERMARK].last_at, failed_after=marks[HINT_FAILURES_WATERMARK].last_at, until=cutoff
    )
    if rows:
        _upsert(hint_sums(rows))
    for mark in marks.values():
        mark.last_at = cutoff
        mark.save(update_fields=["last_at", "updated_at"])


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


def rollup_catch_up(*, batch: int = BATCH) -> int:
    """Run `rollup_advance` until it is up to date (the periodic task and the benchmark call this)."""
    total = 0
    while added := rollup_advance(batch=batch):
        total += added
    return total


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


def records_tail(*, workspace_id: int, since: datetime, after_id: int) -> list[tuple[Any, ...]]:
    """The workspace's records not rolled up yet (id after the watermark) since `since` (one query)."""
    return list(
        AssemblyRecord.objects.filter(workspace_id=workspace_id, created_at__gte=since, id__gt=after_id)
        .order_by()
        .values_list(*FIELDS)
    )
