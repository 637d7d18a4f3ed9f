"""Figures from samples, and what the command prints: one table, the floor, the targets, and the JSON."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from apps.bench.assembly.clients import Sample
from apps.bench.assembly.seed import Seeded

TARGET_ITEMS = 100_000
TARGET_CLIENTS = 8
# Issue 10's targets, over HTTP with 8 clients at 100k items.
TARGET_P95_MS = {"vector": 100.0, "hybrid": 150.0, "text": 200.0}
TARGET_RPS = {"vector": 100.0, "hybrid": 60.0, "text": 30.0}
TARGET_IN_PROCESS_VECTOR_P50_MS = 12.0
TARGET_FLOOR_RATIO = 2.0


@dataclass(frozen=True)
class Summary:
    """One path and mode: latency percentiles of the successful requests, throughput over all of them,
    and the CPU the serving side spent per request (server processes + PostgreSQL; None if unknown)."""

    path: str  # "in-process" | "http"
    mode: str
    requests: int
    errors: int
    partial: int
    cached: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    rps: float
    mean_tokens: float
    server_cpu_ms: float | None = None
    keyword_p95_ms: float | None = None  # the keyword_search stage's p95, from the assembly records


def summarize(
    *,
    path: str,
    mode: str,
    samples: list[Sample],
    seconds: float | None = None,
    cpu_seconds: float | None = None,
    keyword_p95_ms: float | None = None,
) -> Summary:
    """Throughput over `seconds` of wall time, or over the summed latencies when the requests ran one by one."""
    ok = [s for s in samples if s.ok]
    times = sorted(s.ms for s in ok)
    pct = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else [sum(times)] * 99
    wall = seconds if seconds is not None else sum(s.ms for s in samples) / 1000
    return Summary(
        path=path,
        mode=mode,
        requests=len(samples),
        errors=len(samples) - len(ok),
        partial=sum(s.partial for s in ok),
        cached=sum(s.cached for s in ok),
        p50_ms=pct[49],
        p95_ms=pct[94],
        p99_ms=pct[98],
        rps=len(samples) / wall if wall else 0.0,
        mean_tokens=statistics.fmean(s.tokens for s in ok) if ok else 0.0,
        server_cpu_ms=None if cpu_seconds is None or not samples else cpu_seconds * 1000 / len(samples),
        keyword_p95_ms=keyword_p95_ms,
    )


def seed_line(s: Seeded) -> str:
    phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in s.phases)
    index = "" if s.index_rebuilt else "; HNSW index kept and filled row by row"
    return (
        f"seeded {s.items:,} items (1 project, {(s.sessions + 9) // 10} multi-sessions, {s.sessions} sessions) "
        f"in {sum(t for _, t in s.phases):.1f}s ({phases}{index})"
    )


HEADER = (
    f"{'path':<10} {'mode':<6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>7} {'cpu ms':>7} {'kw p95':>7}  "
    "errors   partial cached tokens"
)


def _num(value: float | None, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.1f}"


def summary_line(s: Summary) -> str:
    """One row of the table (cpu ms: server processes + PostgreSQL per request; kw p95: the keyword stage's)."""
    figures = f"{s.p50_ms:>8.1f} {s.p95_ms:>8.1f} {s.p99_ms:>8.1f} {s.rps:>7.1f} {_num(s.server_cpu_ms, 7)}"
    counts = f"{s.errors:>3}/{s.requests:<4} {s.partial:>7} {s.cached:>6} {s.mean_tokens:>6.0f}"
    return f"{s.path:<10} {s.mode:<6} {figures} {_num(s.keyword_p95_ms, 7)}  {counts}"


def floor_ratio(summaries: list[Summary], floor_cpu_ms: float | None) -> float | None:
    """CPU per vector assembly over HTTP (in-process when there is no HTTP row) over the floor's CPU."""
    rows = {(s.path, s.mode): s for s in summaries}
    row = rows.get(("http", "vector")) or rows.get(("in-process", "vector"))
    if row is None or row.server_cpu_ms is None or not floor_cpu_ms:
        return None
    return row.server_cpu_ms / floor_cpu_ms


def target_lines(*, summaries: list[Summary], items: int, concurrency: int, ratio: float | None) -> list[str]:
    """Each figure next to its target, marked met or MISSED (a p95 with errors never counts as met)."""
    lines = [f"targets ({TARGET_ITEMS:,} items in scope; HTTP with {TARGET_CLIENTS} concurrent clients):"]
    if items != TARGET_ITEMS or concurrency != TARGET_CLIENTS:
        lines.append(f"  (this run: {items:,} items, {concurrency} clients: the figures are not comparable)")
    for s in summaries:
        if s.path == "in-process" and s.mode == "vector":
            met = s.p50_ms <= TARGET_IN_PROCESS_VECTOR_P50_MS and not s.errors
            lines.append(
                f"  in-process vector p50 {s.p50_ms:7.1f} ms  target <= {TARGET_IN_PROCESS_VECTOR_P50_MS:5.0f} ms  "
                f"{_mark(met)}"
            )
        if s.path != "http":
            continue
        p95, rps = TARGET_P95_MS[s.mode], TARGET_RPS[s.mode]
        met = s.p95_ms <= p95 and s.errors == 0
        lines.append(f"  http {s.mode:<6} p95  {s.p95_ms:7.1f} ms     target <= {p95:5.0f} ms     {_mark(met)}")
        lines.append(f"  http {s.mode:<6} rate {s.rps:7.1f} req/s  target >= {rps:5.0f} req/s  {_mark(s.rps >= rps)}")
    if ratio is not None:
        met = ratio <= TARGET_FLOOR_RATIO
        lines.append(
            f"  cpu per vector assembly / floor  {ratio:5.2f}x  target <= {TARGET_FLOOR_RATIO:.0f}x  {_mark(met)}"
        )
    return lines


def _mark(met: bool) -> str:
    return "met" if met else "MISSED"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def report_json(
    *,
    items: int,
    concurrency: int,
    summaries: list[Summary],
    floor_ms: float | None,
    ratio: float | None,
    embedding_items_per_s: float | None,
) -> dict[str, Any]:
    """The run in the shape issue 10 gives (null where a figure does not apply)."""
    return {
        "items": items,
        "concurrency": concurrency,
        "rows": [
            {
                "mode": s.mode,
                "path": s.path,
                "p50_ms": _round(s.p50_ms),
                "p95_ms": _round(s.p95_ms),
                "rps": _round(s.rps),
                "server_cpu_ms": _round(s.server_cpu_ms),
                "requests": s.requests,
                "keyword_p95_ms": _round(s.keyword_p95_ms),
                "partial": s.partial,
                "errors": s.errors,
            }
            for s in summaries
        ],
        "floor_ms": _round(floor_ms),
        "floor_ratio": _round(ratio),
        "embedding_items_per_s": _round(embedding_items_per_s),
    }
