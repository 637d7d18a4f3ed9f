"""One benchmark run over a seeded workspace: each mode in-process, then over HTTP, each after a warm-up;
the floor and the embedding rate in the same run; one table at the end."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from apps.bench.assembly.clients import run_http, run_in_process
from apps.bench.assembly.corpus import item_text, passages, request_bodies
from apps.bench.assembly.cpu import postgres_pid, process_cpu_seconds, tree_cpu_seconds
from apps.bench.assembly.embedding_rate import embedding_rate
from apps.bench.assembly.floor import Floor, measure_floor
from apps.bench.assembly.report import (
    HEADER,
    Summary,
    floor_ratio,
    report_json,
    seed_line,
    summarize,
    summary_line,
    target_lines,
)
from apps.bench.assembly.seed import Seeded
from apps.bench.assembly.stage_times import stage_p95
from apps.bench.server import http_server
from apps.layers.embedder import passage_text

MODES = ("vector", "hybrid", "text")
EMBEDDING_SAMPLE = 256  # passages timed for the embedding rate


@dataclass(frozen=True)
class BenchOptions:
    """What to time: the modes, requests per mode and path, HTTP clients, the budget, and which server."""

    modes: tuple[str, ...]
    queries: int
    concurrency: int
    budget: int
    url: str | None  # a running server that uses this database; else `server` starts one
    server: bool
    workers: int = 4  # server processes, when `server`
    embedding_batch: int = 64  # batch size of the embedding-rate measurement; 0 skips it


@dataclass(frozen=True)
class BenchResult:
    summaries: list[Summary]
    floor: Floor | None
    ratio: float | None
    embedding_items_per_s: float | None

    def json(self, *, items: int, concurrency: int) -> dict[str, Any]:
        floor_ms = None if self.floor is None else self.floor.cpu_ms or self.floor.p50_ms
        return report_json(
            items=items,
            concurrency=concurrency,
            summaries=self.summaries,
            floor_ms=floor_ms,
            ratio=self.ratio,
            embedding_items_per_s=self.embedding_items_per_s,
        )


@contextmanager
def _served(options: BenchOptions) -> Iterator[tuple[str, int | None]]:
    if options.url:
        yield options.url, None
    else:
        with http_server(workers=options.workers) as (base, pid):
            yield base, pid


def _cpu(pids: list[int | None], own: bool) -> float | None:
    """CPU seconds so far of the serving side: these process trees (+ this process when `own`)."""
    total = process_cpu_seconds() if own else 0.0
    for pid in pids:
        seconds = tree_cpu_seconds(pid) if pid else None
        if seconds is None:
            return None
        total += seconds
    return total


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _keyword_p95(seeded: Seeded, mode: str, since: datetime, requests: int) -> float | None:
    """The keyword stage's p95 over the run's answers (vector requests search no keywords: None)."""
    if mode == "vector" or not requests:
        return None
    return stage_p95(workspace_id=seeded.workspace.pk, since=since, requests=requests, stage="keyword_search")


def bench_paths(*, seeded: Seeded, options: BenchOptions, write: Callable[[str], Any]) -> BenchResult:
    """Time every mode in-process, then over HTTP when a URL or `server` is given; writes progress as it goes
    and the table at the end.

    Warm-up requests (twice the clients, at least 5) come first and are not counted; the first text
    request of a fresh server loads the embedding model. No two requests of a run are identical.
    """
    warmup, count = max(2 * options.concurrency, 5), options.queries
    tickets = iter(
        random.Random().sample(range(100_000, 1_000_000), 2 * len(options.modes) * (count + warmup) + count + 5)
    )

    def bodies(mode: str, n: int) -> list[dict[str, Any]]:
        chunk = [next(tickets) for _ in range(n)]
        return request_bodies(layer_id=seeded.layer_id, mode=mode, tickets=chunk, budget=options.budget)

    write(seed_line(seeded))
    write(
        f"every request asks at the project ({seeded.items:,} items in scope), budget {options.budget} tokens, "
        "markdown; vector requests send only a query_vector, hybrid ones the vector and the text it embeds"
    )
    postmaster = postgres_pid()
    summaries = []
    for mode in options.modes:
        run_in_process(workspace=seeded.workspace, bodies=bodies(mode, warmup))
        before, since = _cpu([postmaster], own=True), timezone.now()
        samples = run_in_process(workspace=seeded.workspace, bodies=bodies(mode, count))
        cpu = _delta(before, _cpu([postmaster], own=True))
        keyword = _keyword_p95(seeded, mode, since, count)
        summaries.append(
            summarize(path="in-process", mode=mode, samples=samples, cpu_seconds=cpu, keyword_p95_ms=keyword)
        )
        write(summary_line(summaries[-1]))
    floor = measure_floor(workspace_id=seeded.workspace.pk, bodies=bodies("vector", count + 5), budget=options.budget)
    write(
        f"floor (bare pgvector top-k + fetch the rows + count the tokens packed), {floor.requests} requests: "
        f"p50 {floor.p50_ms:.1f} ms, cpu {'-' if floor.cpu_ms is None else f'{floor.cpu_ms:.1f}'} ms per request"
    )
    rate = None
    if options.embedding_batch:
        texts = [
            passage_text(layer_name="session 1", title="", content=item_text(p, i))
            for i, p in enumerate(passages(random.Random(3)))
        ]
        measured = embedding_rate(texts=(texts * 2)[:EMBEDDING_SAMPLE], batch_size=options.embedding_batch)
        rate = measured.items_per_s
        write(
            f"embedding: {measured.items} passages in batches of {measured.batch_size}: "
            f"{measured.items_per_s:.1f} items/s, {measured.tokens_per_s:.0f} tokens/s (this process's threads)"
        )
    if options.url or options.server:
        clients = options.concurrency
        with _served(options) as (base, server_pid):
            for mode in options.modes:
                run_http(url=base, secret=seeded.secret, bodies=bodies(mode, warmup), concurrency=clients)
                before = _cpu([server_pid, postmaster], own=False) if server_pid else None
                since = timezone.now()
                samples, seconds = run_http(
                    url=base, secret=seeded.secret, bodies=bodies(mode, count), concurrency=clients
                )
                cpu = _delta(before, _cpu([server_pid, postmaster], own=False)) if server_pid else None
                keyword = _keyword_p95(seeded, mode, since, sum(s.ok for s in samples))
                summaries.append(
                    summarize(
                        path="http",
                        mode=mode,
                        samples=samples,
                        seconds=seconds,
                        cpu_seconds=cpu,
                        keyword_p95_ms=keyword,
                    )
                )
                write(summary_line(summaries[-1]))
                if failed := Counter(s.error for s in samples if not s.ok):
                    write(f"  {mode} errors: " + ", ".join(f"{n} x {error}" for error, n in failed.most_common()))
    else:
        write("HTTP skipped: give --url of a server that uses this database, or --server to start one")
    ratio = floor_ratio(summaries, floor.cpu_ms)
    write("")
    write(f"{seeded.items:,} items, HTTP x{options.concurrency}; cpu ms = server processes + PostgreSQL per request")
    write(HEADER)
    for s in summaries:
        write(summary_line(s))
    result = BenchResult(summaries=summaries, floor=floor, ratio=ratio, embedding_items_per_s=rate)
    write(floor_line(result))
    for line in target_lines(summaries=summaries, items=seeded.items, concurrency=options.concurrency, ratio=ratio):
        write(line)
    return result


def floor_line(result: BenchResult) -> str:
    floor = result.floor
    if floor is None:
        return "floor: -"
    floor_cpu = "-" if floor.cpu_ms is None else f"{floor.cpu_ms:.1f}"
    shown = "-" if result.ratio is None else f"{result.ratio:.2f}x"
    return f"floor: p50 {floor.p50_ms:.1f} ms, cpu {floor_cpu} ms; cpu per vector assembly / floor: {shown}"


def sizes_table(*, runs: list[tuple[int, BenchResult]], options: BenchOptions) -> list[str]:
    """One table over the runs at several sizes (--sizes, or several --reuse workspaces): each size's rows
    (partial and error counts among them), then its floor and ratio."""
    lines = [
        f"every size, HTTP x{options.concurrency}; cpu ms = server processes + PostgreSQL per request",
        f"{'items':>10} {HEADER}",
    ]
    for items, result in runs:
        lines.extend(f"{items:>10,} {summary_line(s)}" for s in result.summaries)
        lines.append(f"{items:>10,} {floor_line(result)}")
    return lines
