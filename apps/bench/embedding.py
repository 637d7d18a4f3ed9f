"""`bench_embedding`: the bare model's best passage throughput against the service's, in one run.

Bare: the configured provider's passage call (`embeddings.embed_passages`, what the embedder
calls) on exactly the texts the embedder sends (layer name, then the turn), at each setting of
model threads, concurrent calls and batch size, each in a child process (the model's OpenMP
threads are fixed when it loads) at the embedder's EMBEDDING_NICE; the best setting is the bar.
Service: `scripts/serve` (what `make run` serves) on this process's database; the same turns
bulk-loaded through `POST /api/v1/items/bulk/` into a new workspace, timed from the first POST
until `GET /api/v1/status/` reports nothing pending. Meanwhile one text context request a second
checks that queries still answer within their deadline while a backlog exists, and once the bulk
writes have answered, one new turn is posted to its own session (an agent's live turn while its
history is imported): how long until it is embedded, findable by meaning, against the backlog's drain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings

from apps.bench.evaluation.data import Session
from apps.bench.evaluation.locomo import locomo_load
from apps.bench.server import http_server
from apps.core import embeddings
from apps.layers.embedder import passage_text
from apps.layers.models import Item, Layer, LayerKind
from apps.layers.services import layer_create
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

# (model threads, concurrent calls, batch size): one core, two calls on one thread each, two threads.
SETTINGS: tuple[tuple[int, int, int], ...] = ((1, 1, 32), (1, 2, 32), (2, 1, 32), (1, 2, 128))


@dataclass(frozen=True)
class BenchSession:
    sample: str
    session: Session


def bench_sessions(*, path: Path, items: int) -> list[BenchSession]:
    """LoCoMo's sessions in order until they hold at least `items` turns (whole sessions, at least one)."""
    chosen: list[BenchSession] = []
    count = 0
    for sample in locomo_load(path=path).conversations:
        for session in sample.sessions:
            if chosen and count >= items:
                return chosen
            chosen.append(BenchSession(sample=sample.id, session=session))
            count += len(session.turns)
    return chosen


def passages(sessions: list[BenchSession]) -> list[str]:
    """What the embedder sends for each turn: its session layer's name, then the turn."""
    return [
        passage_text(layer_name=s.session.id, title="", content=turn.content)
        for s in sessions
        for turn in s.session.turns
    ]


def bare_rate(*, texts: list[str], calls: int, batch: int) -> float:
    """Items/s of the provider's passage call on `texts`, `calls` batches at a time (after a warm-up), at
    the service embedder's priority (EMBEDDING_NICE): on a machine shared with other jobs a niced
    embedder gets a tenth of a core's share, so bare and service are compared at the same priority
    (on an idle machine the nice value changes nothing)."""
    os.setpriority(os.PRIO_PROCESS, 0, settings.EMBEDDING_NICE)  # this thread, and the threads it starts
    embeddings.embed_passages(texts[:8])
    chunks = [texts[start : start + batch] for start in range(0, len(texts), batch)]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=calls) as pool:
        list(pool.map(embeddings.embed_passages, chunks))
    return len(texts) / (time.perf_counter() - started)


def bare_best(*, path: Path, items: int, grid: tuple[tuple[int, int, int], ...] = SETTINGS) -> list[dict[str, Any]]:
    """Each setting's items/s, each measured in a child process of its own."""
    results = []
    for threads, calls, batch in grid:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        command = [sys.executable, "manage.py", "bench_embedding", "--child", "--path", str(path)]
        command += ["--items", str(items), "--calls", str(calls), "--batch", str(batch)]
        done = subprocess.run(command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the bare run ({threads} threads, {calls} calls) failed:\n{done.stderr[-2000:]}")
        rate = float(json.loads(done.stdout.strip().splitlines()[-1])["items_per_s"])
        results.append({"threads": threads, "calls": calls, "batch": batch, "items_per_s": round(rate, 2)})
    return results


@dataclass
class Probe:
    """Text context requests sent while the backlog is embedded: latency and partial answers."""

    latencies_ms: list[float] = field(default_factory=list)
    partial: int = 0
    errors: int = 0
    writes_s: float | None = None  # when the last bulk write had answered, from the first one
    live_s: float | None = None  # from posting the live turn (after the writes) until it was embedded
    live_pending: int | None = None  # items waiting for their embedding when the live turn was posted

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latencies_ms)
        p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)] if ordered else None
        return {
            "requests": len(ordered),
            "p95_ms": None if p95 is None else round(p95, 1),
            "max_ms": round(ordered[-1], 1) if ordered else None,
            "partial": self.partial,
            "errors": self.errors,
            "deadline_ms": settings.ASSEMBLY_TIMEOUT_MS,
            "writes_done_s": None if self.writes_s is None else round(self.writes_s, 3),
            "live_turn_embedded_s": None if self.live_s is None else round(self.live_s, 3),
            "pending_when_live_turn_posted": self.live_pending,
        }


def _layers(workspace: Workspace, sessions: list[BenchSession]) -> dict[str, int]:
    """A multi-session layer per sample and a session layer per session, as eval_locomo loads them."""
    root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    tops: dict[str, Layer] = {}
    out = {}
    for s in sessions:
        if s.sample not in tops:
            tops[s.sample] = layer_create(workspace=workspace, kind=LayerKind.MULTI_SESSION, name=s.sample, parent=root)
        out[s.session.id] = layer_create(
            workspace=workspace, kind=LayerKind.SESSION, name=s.session.id, parent=tops[s.sample]
        ).pk
    return out


def _probe(client: httpx.Client, layer: int, stop: threading.Event, probe: Probe) -> None:
    while not stop.wait(1.0):
        started = time.perf_counter()
        try:
            answer = client.post("/api/v1/context/", json={"layer": layer, "query": "what did they plan for the trip"})
            answer.raise_for_status()
            probe.partial += bool(answer.json().get("partial"))
        except httpx.HTTPError:
            probe.errors += 1
            continue
        probe.latencies_ms.append((time.perf_counter() - started) * 1000)


LIVE_TURN = "Can you book the table for Friday at eight? The Italian place near the station."


def _embedded(item_id: int) -> bool:
    return Item.objects.filter(pk=item_id, embedding__isnull=False).exists()


def service_rate(*, sessions: list[BenchSession], workers: int, timeout: float = 3600) -> tuple[float, int, Probe]:
    """Items/s from the first bulk POST until nothing is pending, through `scripts/serve`; with the probe."""
    workspace, created = workspace_create(slug=f"bench-embedding-{int(time.time())}")
    try:
        layers = _layers(workspace, sessions)
        first = Layer.objects.get(pk=next(iter(layers.values())))
        live_layer = layer_create(workspace=workspace, kind=LayerKind.SESSION, name="live", parent=first.parent).pk
        total = sum(len(s.session.turns) for s in sessions)
        headers = {"Authorization": f"Bearer {created.secret}"}
        with (
            http_server(workers=workers) as (base, _pid),
            httpx.Client(base_url=base, headers=headers, timeout=120) as c,
        ):
            stop, probe = threading.Event(), Probe()
            prober = threading.Thread(target=_probe, args=(c, next(iter(layers.values())), stop, probe), daemon=True)
            started = time.perf_counter()
            prober.start()
            for s in sessions:
                body = [{"kind": "message", "role": t.role, "content": t.content} for t in s.session.turns]
                layer = layers[s.session.id]
                c.post("/api/v1/items/bulk/", json={"layer": layer, "items": body}).raise_for_status()
            probe.writes_s = time.perf_counter() - started
            probe.live_pending = c.get("/api/v1/status/").json()["items_pending_embedding"]
            live_posted = time.perf_counter()
            live = c.post(
                "/api/v1/items/", json={"layer": live_layer, "kind": "message", "role": "user", "content": LIVE_TURN}
            )
            live.raise_for_status()
            total += 1
            while c.get("/api/v1/status/").json()["items_pending_embedding"] > 0:
                if time.perf_counter() - started > timeout:
                    raise RuntimeError(f"items still pending after {timeout:.0f} s")
                if probe.live_s is None and _embedded(live.json()["id"]):
                    probe.live_s = time.perf_counter() - live_posted
                time.sleep(0.25)
            if probe.live_s is None:
                probe.live_s = time.perf_counter() - live_posted
            seconds = time.perf_counter() - started
            stop.set()
            prober.join()
        return total / seconds, total, probe
    finally:
        Workspace.objects.filter(pk=workspace.pk).delete()
