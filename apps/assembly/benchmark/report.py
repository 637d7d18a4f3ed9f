"""Figures from samples, and the lines the command prints: per path and mode, then each target met or missed."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from apps.assembly.benchmark.clients import Sample
from apps.assembly.benchmark.seed import Seeded

TARGET_ITEMS = 100_000
TARGET_CLIENTS = 8
# Both requests that carry a query_vector (alone or with its text) answer to the 50 ms target.
TARGET_P95_MS = {"vector": 50.0, "hybrid": 50.0, "text": 100.0}
TARGET_RPS = 100.0


@dataclass(frozen=True)
class Summary:
    """One path and mode: latency percentiles of the successful requests, throughput over all of them."""

    path: str
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


def summarize(*, path: str, mode: str, samples: list[Sample], seconds: float | None = None) -> Summary:
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
    )


def seed_line(s: Seeded) -> str:
    phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in s.phases)
    index = "" if s.index_rebuilt else "; HNSW index kept and filled row by row"
    return (
        f"seeded {s.items:,} items (1 project, {(s.sessions + 9) // 10} multi-sessions, {s.sessions} sessions) "
        f"in {sum(t for _, t in s.phases):.1f}s ({phases}{index})"
    )


def summary_line(s: Summary) -> str:
    return (
        f"{s.path:<13} {s.mode:<6}  p50={s.p50_ms:7.1f}ms  p95={s.p95_ms:7.1f}ms  p99={s.p99_ms:7.1f}ms  "
        f"throughput={s.rps:6.1f} req/s  errors={s.errors}/{s.requests}  partial={s.partial}  cached={s.cached}  "
        f"mean_tokens={s.mean_tokens:.0f}"
    )


def target_lines(*, http_summaries: list[Summary], items: int, concurrency: int) -> list[str]:
    """Each HTTP figure next to its target, marked met or MISSED (a p95 with errors never counts as met)."""
    lines = [f"targets (over HTTP, {TARGET_ITEMS:,} items in scope, {TARGET_CLIENTS} concurrent clients):"]
    if items != TARGET_ITEMS or concurrency != TARGET_CLIENTS:
        lines.append(f"  (this run: {items:,} items, {concurrency} clients: the figures are not comparable)")
    for s in http_summaries:
        target = TARGET_P95_MS[s.mode]
        p95_met, rps_met = s.p95_ms <= target and not s.errors, s.rps >= TARGET_RPS
        lines.append(f"  {s.mode:<6} p95        {s.p95_ms:7.1f} ms     target <= {target:5.0f} ms     {_mark(p95_met)}")
        lines.append(
            f"  {s.mode:<6} throughput {s.rps:7.1f} req/s  target >= {TARGET_RPS:5.0f} req/s  {_mark(rps_met)}"
        )
    return lines


def _mark(met: bool) -> str:
    return "met" if met else "MISSED"
