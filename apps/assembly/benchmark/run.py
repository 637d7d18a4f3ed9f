"""One benchmark run over a seeded workspace: each mode in-process, then over HTTP, each after a warm-up."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from apps.assembly.benchmark.clients import run_http, run_in_process
from apps.assembly.benchmark.corpus import request_bodies
from apps.assembly.benchmark.report import Summary, seed_line, summarize, summary_line, target_lines
from apps.assembly.benchmark.seed import Seeded
from apps.assembly.benchmark.server import http_server

MODES = ("vector", "hybrid", "text")


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


@contextmanager
def _served(options: BenchOptions) -> Iterator[str]:
    if options.url:
        yield options.url
    else:
        with http_server(workers=options.workers) as base:
            yield base


def bench_paths(*, seeded: Seeded, options: BenchOptions, write: Callable[[str], Any]) -> list[Summary]:
    """Time every mode in-process, then over HTTP when a URL or `server` is given; writes each line as it is known.

    Warm-up requests (twice the clients, at least 5) come first and are not counted; the first text
    request of a fresh server loads the embedding model. No two requests of a run are identical.
    """
    warmup, count = max(2 * options.concurrency, 5), options.queries
    tickets = iter(random.Random().sample(range(100_000, 1_000_000), 2 * len(options.modes) * (count + warmup)))

    def bodies(mode: str, n: int) -> list[dict[str, Any]]:
        chunk = [next(tickets) for _ in range(n)]
        return request_bodies(layer_id=seeded.layer_id, mode=mode, tickets=chunk, budget=options.budget)

    write(seed_line(seeded))
    write(
        f"every request asks at the project ({seeded.items:,} items in scope), budget {options.budget} tokens, "
        "markdown; vector requests send only a query_vector, hybrid ones the vector and the text it embeds"
    )
    summaries = []
    for mode in options.modes:
        run_in_process(workspace=seeded.workspace, bodies=bodies(mode, warmup))
        samples = run_in_process(workspace=seeded.workspace, bodies=bodies(mode, count))
        summaries.append(summarize(path="in-process x1", mode=mode, samples=samples))
        write(summary_line(summaries[-1]))
    if not (options.url or options.server):
        write("HTTP skipped: give --url of a server that uses this database, or --server to start one")
        return summaries
    path, clients = f"http x{options.concurrency}", options.concurrency
    with _served(options) as base:
        for mode in options.modes:
            run_http(url=base, secret=seeded.secret, bodies=bodies(mode, warmup), concurrency=clients)
            samples, seconds = run_http(url=base, secret=seeded.secret, bodies=bodies(mode, count), concurrency=clients)
            summaries.append(summarize(path=path, mode=mode, samples=samples, seconds=seconds))
            write(summary_line(summaries[-1]))
    over_http = [s for s in summaries if s.path == path]
    for line in target_lines(http_summaries=over_http, items=seeded.items, concurrency=clients):
        write(line)
    return summaries
