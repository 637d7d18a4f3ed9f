"""The dashboard's figures for one workspace and time range, from the rollups plus the raw tail.

Every figure is a fixed handful of indexed queries whatever the traffic: the rollup rows of the
range (one row per chart step), the records after the rollup's watermark, and one aggregate each
for consumption, hints, summary runs, summaries and the embedding backlog.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

from django.utils import timezone

from apps.assembly.models import Span
from apps.assembly.rollup.selectors import consumption_rows, records_tail, rollup_counts, rollup_rows, watermarks
from apps.assembly.rollup.sums import SUM_FIELDS, consumption_sums, hint_sums, latency_of_bin, rollup_sums
from apps.assembly.selectors import records_first_at
from apps.error_patterns.selectors import hint_events
from apps.layers.selectors import items_pending_embedding_count
from apps.proxy.selectors import ModelCalls, proxy_calls_by_model
from apps.summaries.selectors import summaries_health
from apps.web.selectors.dashboard_activity import Hints, SummaryRuns, summary_runs
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Range:
    key: str
    label: str
    length: timedelta
    step: timedelta
    span: str


RANGES: dict[str, Range] = {
    r.key: r
    for r in (
        Range("1h", "1 hour", timedelta(hours=1), timedelta(minutes=1), Span.MINUTE),
        Range("24h", "24 hours", timedelta(hours=24), timedelta(minutes=15), Span.QUARTER),
        Range("7d", "7 days", timedelta(days=7), timedelta(hours=1), Span.HOUR),
        Range("30d", "30 days", timedelta(days=30), timedelta(hours=6), Span.SIX_HOURS),
    )
}
DEFAULT_RANGE = "24h"


@dataclass(frozen=True)
class Dashboard:
    """Series share `buckets` (the start of each step, unix seconds); totals cover the whole range."""

    range: Range
    buckets: list[int]
    assemblies: list[float]
    per_minute: list[float | None]
    p50_ms: list[float | None]
    p95_ms: list[float | None]
    assembly_cache_rate: list[float | None]
    embedding_cache_rate: list[float | None]
    overflowed: list[float]
    truncated: list[float]
    tokens_by_item_kind: dict[str, list[float | None]]
    tokens_by_layer_kind: dict[str, list[float | None]]
    consumption_ratio: list[float | None]
    hints: Hints
    summary_runs: SummaryRuns
    totals: dict[str, Any]
    zones: list[tuple[str, int]]
    agent_types: list[tuple[str, int]]
    models: list[tuple[str, int]]
    proxied: list[ModelCalls]  # the LLM proxy's calls by model: latency, tokens, our count's error


def range_fitting_data(*, workspace: Workspace, now: datetime | None = None) -> str:
    """The shortest range that holds every assembly of the last 30 days, so that fresh data fills the
    charts instead of a sliver at their right edge; DEFAULT_RANGE when there is none."""
    now = now or timezone.now()
    longest = max(RANGES.values(), key=lambda r: r.length)
    first = records_first_at(workspace_id=workspace.pk, since=now - longest.length)
    if first is None:
        return DEFAULT_RANGE
    age = now - first
    return min((r for r in RANGES.values() if r.length >= age), key=lambda r: r.length, default=longest).key


def _floor(moment: datetime, step: timedelta) -> datetime:
    seconds = step.total_seconds()
    return datetime.fromtimestamp((moment.timestamp() // seconds) * seconds, tz=UTC)


def dashboard_figures(*, workspace: Workspace, range_key: str, now: datetime | None = None) -> Dashboard:
    """All the dashboard's figures for `workspace` over the range `range_key` (a key of RANGES)."""
    span = RANGES.get(range_key) or RANGES[DEFAULT_RANGE]
    now = now or timezone.now()
    start = _floor(now - span.length, span.step)
    step = span.step.total_seconds()
    count = int((now - start).total_seconds() // step) + 1
    buckets = [int(start.timestamp() + i * step) for i in range(count)]

    positions = {bucket: i for i, bucket in enumerate(buckets)}  # every bucket below starts on a step

    def index(epoch: float) -> int | None:
        return positions.get(int(epoch))

    sums: dict[str, list[float]] = {name: [0.0] * count for name in SUM_FIELDS}
    counts: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0] * count))
    marks = watermarks()
    for row in rollup_rows(workspace_id=workspace.pk, span=span.span, start=start):
        i = index(row[0])
        if i is not None:
            for name, value in zip(SUM_FIELDS, row[1:], strict=True):
                sums[name][i] += float(value or 0)
    for epoch, dimension, key, value in rollup_counts(workspace_id=workspace.pk, span=span.span, start=start):
        i = positions.get(epoch)  # inlined: thousands of rows over a week
        if i is not None:
            counts[dimension][key][i] += value
    tail = records_tail(workspace_id=workspace.pk, since=start, after_id=marks.last_id)
    hint_tail = hint_events(
        injected_after=marks.hints, failed_after=marks.hint_failures, since=start, workspace_id=workspace.pk
    )
    consumption_tail = consumption_rows(after=marks.consumption, workspace_id=workspace.pk)
    for (_, _, bucket), tail_sums in chain(
        rollup_sums(tail, spans=[span.span]).items(),
        hint_sums(hint_tail, spans=[span.span]).items(),
        consumption_sums(consumption_tail, spans=[span.span]).items(),
    ):
        i = index(bucket.timestamp())
        if i is None:
            continue
        for name in SUM_FIELDS:
            sums[name][i] += tail_sums.values[name]
        for (dimension, key), value in tail_sums.counts.items():
            counts[dimension][key][i] += value

    assemblies = sums["assemblies"]
    minutes = step / 60
    p50, p95 = _percentiles(counts.get("latency_bin", {}), count)
    all_bins = {key: [sum(values)] for key, values in counts.get("latency_bin", {}).items()}
    total_p50, total_p95 = _percentiles(all_bins, 1)
    consumption = _consumption(counts=counts, count=count)
    hint_counts = counts.get("hints", {})
    hint_figures = Hints(
        injected=hint_counts.get("injected", [0.0] * count), failed_after=hint_counts.get("failed_after", [0.0] * count)
    )
    runs = summary_runs(workspace_id=workspace.pk, start=start, step=span.step, index=index, count=count)
    total = sum(assemblies)
    totals: dict[str, Any] = {
        "assemblies": int(total),
        "tokens": int(sum(sums["tokens_used"])),
        "p50_ms": total_p50[0],
        "p95_ms": total_p95[0],
        "assembly_cache_rate": _rate(sum(sums["assembly_cache_hits"]), total),
        "embedding_cache_rate": _rate(sum(sums["embedding_cache_hits"]), sum(sums["embedding_lookups"])),
        "overflowed": int(sum(sums["overflowed"])),
        "truncated": int(sum(sums["truncated"])),
        "hints_injected": int(sum(hint_figures.injected)),
        "failures_after_hint": int(sum(hint_figures.failed_after)),
        "failure_after_hint_rate": hint_figures.failure_rate,
        "summary_runs": runs.totals,
        **_state(workspace=workspace),
        "consumption_ratio": consumption[1],
    }
    return Dashboard(
        range=span,
        buckets=buckets,
        assemblies=assemblies,
        per_minute=[n / minutes for n in assemblies],
        p50_ms=p50,
        p95_ms=p95,
        assembly_cache_rate=[_rate(h, n) for h, n in zip(sums["assembly_cache_hits"], assemblies, strict=True)],
        embedding_cache_rate=[
            _rate(h, n) for h, n in zip(sums["embedding_cache_hits"], sums["embedding_lookups"], strict=True)
        ],
        overflowed=sums["overflowed"],
        truncated=sums["truncated"],
        tokens_by_item_kind=dict(sorted(counts.get("item_kind", {}).items())),  # type: ignore[arg-type]
        tokens_by_layer_kind=dict(sorted(counts.get("layer_kind", {}).items())),  # type: ignore[arg-type]
        consumption_ratio=consumption[0],
        hints=hint_figures,
        summary_runs=runs,
        totals=totals,
        zones=_totals(counts.get("zone", {})),
        agent_types=_totals(counts.get("agent_type", {})),
        models=_totals(counts.get("model", {})),
        proxied=proxy_calls_by_model(workspace_id=workspace.pk, since=start),
    )


def _rate(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _totals(by_key: dict[str, list[float]]) -> list[tuple[str, int]]:
    return sorted(((key, int(sum(values))) for key, values in by_key.items()), key=lambda pair: -pair[1])


def _percentiles(bins: dict[str, list[float]], count: int) -> tuple[list[float | None], list[float | None]]:
    """p50 and p95 per step from the latency bins (each within ~12 % of the exact figure)."""
    ordered = sorted((int(key), values) for key, values in bins.items())
    p50: list[float | None] = []
    p95: list[float | None] = []
    for i in range(count):
        column = [(b, values[i]) for b, values in ordered if values[i]]
        n = sum(c for _, c in column)
        if not n:
            p50.append(None)
            p95.append(None)
            continue
        found: dict[float, float] = {}
        seen = 0.0
        for b, c in column:
            seen += c
            for q in (0.5, 0.95):
                if q not in found and seen >= q * n:
                    found[q] = round(latency_of_bin(b), 1)
        p50.append(found[0.5])
        p95.append(found[0.95])
    return p50, p95


def _consumption(*, counts: dict[str, dict[str, list[float]]], count: int) -> tuple[list[float | None], float | None]:
    """Consumed / injected packages of the assemblies reported in each step, and overall."""
    used = counts.get("consumption", {}).get("used", [0.0] * count)
    injected = counts.get("consumption", {}).get("injected", [0.0] * count)
    ratios = [round(u / n, 3) if n else None for u, n in zip(used, injected, strict=True)]
    return ratios, (round(sum(used) / sum(injected), 3) if sum(injected) else None)


def _state(*, workspace: Workspace) -> dict[str, Any]:
    """Figures that are states, not events: the summaries stale now and the summary LLM's failures in a
    row (one query), the items waiting for an embedding (one, on the partial index `item_pending_embedding`)."""
    stale, failures = summaries_health(workspace_id=workspace.pk)
    pending = items_pending_embedding_count(workspace=workspace)
    return {"summaries_stale": stale, "summary_llm_failures": failures, "items_pending_embedding": pending}
