"""Two tenants on one server (issue 26): a victim's steady context requests while an attacker bursts.

The victim sends one request every `pace` seconds (the next one waits for the answer); each of the
attacker's clients sends requests back to back, every one unique (no assembly-cache hits), from a
process of their own, so the victim's clock never waits on their interpreter. Our
clients follow `Retry-After` (clients/python/contextarch_client/retry.py), so attacker clients do
too (at most 1 s) unless `rude`, when they send again at once. The figures that matter are the
victim's: its p95 under each burst against its p95 alone, and the codes of its failures.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apps.bench.assembly.clients import Sample, post_once

BURSTS = (1, 2, 8, 80)
GOAL_RATIO = 2.0  # the victim's p95 under bursts 1, 2 and 8 within 2x of its p95 alone
GOAL_BURSTS = (1, 2, 8)


@dataclass(frozen=True)
class Tenant:
    """One workspace's key and the request bodies its clients send (made unique per request)."""

    secret: str
    bodies: list[dict[str, Any]]


@dataclass(frozen=True)
class Phase:
    """What one phase measured: the victim's samples and the attacker's, over `seconds`."""

    name: str
    attackers: int
    seconds: float
    victim: list[Sample]
    attacker: list[Sample]


class _Bodies:
    """The tenant's bodies in turn, each with a query made unique by a counter (so never a cache hit)."""

    def __init__(self, tenant: Tenant, label: str) -> None:
        self._tenant, self._label, self._n = tenant, label, 0
        self._lock = threading.Lock()

    def next(self) -> bytes:
        with self._lock:
            self._n += 1
            n = self._n
        body = dict(self._tenant.bodies[n % len(self._tenant.bodies)])
        body["query"] = f"{body.get('query', 'what changed')} [{self._label} {n}]"
        return json.dumps(body).encode()


def _connection(url: str) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
    return conn, parts.path.rstrip("/") + "/api/v1/context/"


def _headers(tenant: Tenant) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant.secret}", "Content-Type": "application/json"}


def _victim(url: str, tenant: Tenant, bodies: _Bodies, pace: float, stop: threading.Event, out: list[Sample]) -> None:
    conn, path = _connection(url)
    headers = _headers(tenant)
    while not stop.is_set():
        started = time.perf_counter()
        out.append(post_once(conn, path, bodies.next(), headers))
        stop.wait(max(0.0, pace - (time.perf_counter() - started)))
    conn.close()


def _attacker(
    url: str, tenant: Tenant, bodies: _Bodies, rude: bool, stop: threading.Event, counting: Any, out: list[Sample]
) -> None:
    conn, path = _connection(url)
    headers = _headers(tenant)
    while not stop.is_set():
        sample = post_once(conn, path, bodies.next(), headers)
        if counting.is_set():
            out.append(sample)
        if not sample.ok and not rude:
            stop.wait(min(sample.retry_after, 1.0) or 0.05)
    conn.close()


def _burst(url: str, tenant: Tenant, clients: int, rude: bool, go: Any, counting: Any, halt: Any, results: Any) -> None:
    """The attacker's clients, in a process of their own (the victim's clock shares no interpreter
    with them): `go` once they run; the samples taken while `counting`, sent back once `halt` is set."""
    bodies = _Bodies(tenant, f"attacker {os.getpid()}")
    stop = threading.Event()
    samples: list[Sample] = []
    threads = [
        threading.Thread(target=_attacker, args=(url, tenant, bodies, rude, stop, counting, samples))
        for _ in range(clients)
    ]
    for thread in threads:
        thread.start()
    go.set()
    halt.wait()
    stop.set()
    for thread in threads:
        thread.join()
    results.put(samples)


def run_phase(
    *,
    url: str,
    name: str,
    victim: _Bodies,
    victim_tenant: Tenant,
    attacker_tenant: Tenant,
    attackers: int,
    seconds: float,
    pace: float,
    rude: bool,
) -> Phase:
    """The victim alone (attackers=0) or beside `attackers` clients of the attacker, for `seconds`."""
    stop = threading.Event()
    victim_samples: list[Sample] = []
    attacker_samples: list[Sample] = []
    context = multiprocessing.get_context("fork")
    results: Any = context.Queue()
    go, counting, halt = context.Event(), context.Event(), context.Event()
    burst = context.Process(
        target=_burst, args=(url, attacker_tenant, attackers, rude, go, counting, halt, results), daemon=True
    )
    if attackers:
        burst.start()
        go.wait(30)
        time.sleep(min(1.0, seconds / 5))  # the burst is under way before the victim's clock starts
        counting.set()
    started = time.perf_counter()
    victim_thread = threading.Thread(target=_victim, args=(url, victim_tenant, victim, pace, stop, victim_samples))
    victim_thread.start()
    time.sleep(seconds)
    stop.set()
    victim_thread.join()
    elapsed = time.perf_counter() - started
    if attackers:
        halt.set()
        attacker_samples = results.get(timeout=120)
        burst.join(30)
    return Phase(name, attackers, elapsed, victim_samples, attacker_samples)


def tenants_bench(
    *,
    url: str,
    victim: Tenant,
    attacker: Tenant,
    bursts: tuple[int, ...] = BURSTS,
    seconds: float = 15.0,
    pace: float = 0.1,
    rude: bool = False,
    write: Callable[[str], None] = print,
) -> list[Phase]:
    """A warm-up, the victim alone, then beside each burst, then alone again (the machine's drift)."""
    victim_bodies = _Bodies(victim, "victim")

    def phase(name: str, attackers: int, length: float) -> Phase:
        result = run_phase(
            url=url,
            name=name,
            victim=victim_bodies,
            victim_tenant=victim,
            attacker_tenant=attacker,
            attackers=attackers,
            seconds=length,
            pace=pace,
            rude=rude,
        )
        write(phase_line(result, None))
        return result

    phase("warm-up", 1, min(seconds, 3.0))
    phases = [phase("unloaded", 0, seconds)]
    phases += [phase(f"burst {n}", n, seconds) for n in bursts]
    phases.append(phase("unloaded again", 0, seconds))
    return phases


def _p(samples: list[Sample], q: int) -> float:
    times = sorted(s.ms for s in samples if s.ok)
    if not times:
        return float("nan")
    if len(times) == 1:
        return times[0]
    return statistics.quantiles(times, n=100, method="inclusive")[q - 1]


def _codes(samples: list[Sample]) -> str:
    counts = Counter(s.error for s in samples if not s.ok)
    return ", ".join(f"{code} x{n}" for code, n in counts.most_common()) or "-"


HEADER = (
    f"{'phase':<15} {'victim':>6} {'p50 ms':>7} {'p95 ms':>7} {'p95 x':>6}  {'victim errors':<28} "
    f"{'attacker ok/s':>13} {'p95 ms':>7}  attacker errors"
)


def phase_line(phase: Phase, unloaded_p95: float | None) -> str:
    p95 = _p(phase.victim, 95)
    ratio = f"{p95 / unloaded_p95:6.2f}" if unloaded_p95 else f"{'-':>6}"
    ok = sum(s.ok for s in phase.attacker)
    attacker = f"{ok / phase.seconds:13.1f} {_p(phase.attacker, 95):7.1f}" if phase.attackers else f"{'-':>13} {'-':>7}"
    return (
        f"{phase.name:<15} {len(phase.victim):>6} {_p(phase.victim, 50):7.1f} {p95:7.1f} {ratio}  "
        f"{_codes(phase.victim):<28} {attacker}  {_codes(phase.attacker) if phase.attackers else '-'}"
    )


def _server_p(samples: list[Sample], name: str, q: int) -> str:
    """The q-th percentile of the server's figure `name` over the successful samples, or '-'."""
    values = sorted(v for s in samples if s.ok and (v := s.server_ms(name)) is not None)
    if not values:
        return "-"
    return f"{values[0] if len(values) == 1 else statistics.quantiles(values, n=100, method='inclusive')[q - 1]:.1f}"


WHERE_HEADER = (
    f"{'phase':<15} {'slot wait p50/p95':>18} {'in slot p50/p95':>16} {'server p50/p95':>16} "
    f"{'attacker in slot p50/p95':>25}"
)


def where_line(phase: Phase) -> str:
    """Where the victim's time went, from its answers' Server-Timing: waiting for its process's slot,
    in the slot (its assembly), and in the server in all; and how long the attacker's held a slot."""

    def pair(samples: list[Sample], name: str) -> str:
        return f"{_server_p(samples, name, 50)}/{_server_p(samples, name, 95)}"

    attacker = pair(phase.attacker, "slot") if phase.attackers else "-"
    return (
        f"{phase.name:<15} {pair(phase.victim, 'slot-wait'):>18} {pair(phase.victim, 'slot'):>16} "
        f"{pair(phase.victim, 'app'):>16} {attacker:>25}"
    )


def report_lines(phases: list[Phase]) -> list[str]:
    """The table (ratios against the first unloaded p95), where the victim's time went, and whether
    the goal was met."""
    unloaded = _p(phases[0].victim, 95)
    lines = [HEADER, *(phase_line(p, unloaded) for p in phases), "", WHERE_HEADER, *map(where_line, phases), ""]
    goal = [p for p in phases if p.attackers in GOAL_BURSTS]
    worst = max((_p(p.victim, 95) / unloaded for p in goal), default=float("nan"))
    server_errors = sum(s.error.startswith("5") for p in phases for s in p.victim)
    verdict = "met" if worst <= GOAL_RATIO and not server_errors else "MISSED"
    lines.append(
        f"goal: victim p95 within {GOAL_RATIO:g}x of unloaded under bursts {', '.join(map(str, GOAL_BURSTS))} "
        f"and no 5xx: {verdict} (worst {worst:.2f}x, victim 5xx: {server_errors})"
    )
    return lines
