"""What tracing costs an assembly: in-process vector assemblies with tracing off and on, alternating in
one run (off, on, on, off, ...: drift in the machine's load falls on both), so the two are comparable.

"On" exports every span over OTLP/HTTP, as a deployment would, to a sink in this process that reads
each request and answers 200 without decoding it; each "on" round ends with a flush, so its export
is counted in its own CPU. CPU is this process's (all threads: the request path, the batch exporter's
thread, the sink) plus PostgreSQL's, per assembly.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from apps.assembly.timings import STAGES
from apps.bench.assembly.clients import run_in_process
from apps.bench.assembly.cpu import postgres_pid, process_cpu_seconds, tree_cpu_seconds
from apps.bench.assembly.seed import Seeded
from apps.core import telemetry


@dataclass
class Sink:
    """An OTLP/HTTP endpoint that takes every export and keeps only its count and size."""

    url: str
    requests: int = 0
    bytes: int = 0


@contextmanager
def otlp_sink() -> Iterator[Sink]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    sink = Sink(url=f"http://127.0.0.1:{server.server_address[1]}")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            sink.bytes += len(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            sink.requests += 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sink
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class StateCost:
    """One state's assemblies over all its rounds."""

    state: str  # "off" or "on"
    requests: int
    cpu_ms: float | None  # per assembly: this process + PostgreSQL
    round_cpu_ms: list[float]  # per assembly, each round
    p50_ms: float


def tracing_cost(
    *, seeded: Seeded, rounds: int, bodies: Callable[[int], list[dict[str, Any]]], per_round: int
) -> tuple[list[StateCost], Sink]:
    """`rounds` rounds of each state, `per_round` vector assemblies each (no two alike: no cache hit)."""
    postmaster = postgres_pid()
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    latencies: dict[str, list[float]] = {"off": [], "on": []}
    order = [state for pair in range(rounds) for state in (("off", "on") if pair % 2 == 0 else ("on", "off"))]
    with otlp_sink() as sink:
        try:
            for state in ["off", "on", *order]:  # the first two rounds warm up, uncounted
                telemetry.tracing_configure(
                    {"OTEL_EXPORTER_OTLP_ENDPOINT": sink.url, "OTEL_SERVICE_NAME": "bench"} if state == "on" else {}
                )
                work = bodies(per_round)
                before = _cpu(postmaster)
                samples = run_in_process(workspace=seeded.workspace, bodies=work)
                telemetry.tracing_flush()
                after = _cpu(postmaster)
                cpu[state].append((after - before) * 1000 / per_round)
                latencies[state] += [s.ms for s in samples]
        finally:
            telemetry.tracing_configure({})
    return [_cost(state, cpu[state][1:], latencies[state][per_round:]) for state in ("off", "on")], sink


def _cpu(postmaster: int | None) -> float:
    return process_cpu_seconds() + ((tree_cpu_seconds(postmaster) or 0.0) if postmaster else 0.0)


def _cost(state: str, round_cpu: list[float], latencies: list[float]) -> StateCost:
    return StateCost(
        state=state,
        requests=len(latencies),
        cpu_ms=statistics.fmean(round_cpu) if round_cpu else None,
        round_cpu_ms=round_cpu,
        p50_ms=statistics.median(latencies),
    )


def off_path_ns(repeat: int = 200_000) -> float:
    """Nanoseconds per assembly that tracing's code costs while off: the operation check and one
    stage check per stage timed (with tracing off, as it must be)."""
    assert not telemetry.tracing()
    started = time.perf_counter_ns()
    for _ in range(repeat):
        telemetry.tracing()
        for name in STAGES:
            telemetry.stage_started(name)
    return (time.perf_counter_ns() - started) / repeat
