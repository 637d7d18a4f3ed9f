"""The two ways the benchmark asks for context: the service in this process, and POSTs over keep-alive HTTP."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import server_timing
from apps.core.errors import DomainError
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Sample:
    """One request: its latency, whether it succeeded, and what the answer said about itself."""

    ms: float
    ok: bool
    tokens: int = 0
    partial: bool = False  # the deadline passed and part of the context is missing
    cached: bool = False
    error: str = ""  # a failed request: its status and error code, or the connection error
    retry_after: float = 0.0  # a failed request's Retry-After header, in seconds (0: none)
    server: tuple[tuple[str, float], ...] = ()  # the answer's Server-Timing figures (apps/core/server_timing.py)

    def server_ms(self, name: str) -> float | None:
        """The server's figure `name` in ms (`slot-wait`, `slot`, `app`), or None if it sent none."""
        found = [ms for n, ms in self.server if n == name]
        return sum(found) if found else None


def _sample(ms: float, body: dict[str, Any], server: tuple[tuple[str, float], ...] = ()) -> Sample:
    return Sample(
        ms, True, int(body["total_tokens"]), bool(body.get("partial")), bool(body.get("cached")), server=server
    )


def run_in_process(*, workspace: Workspace, bodies: list[dict[str, Any]]) -> list[Sample]:
    """One request after another through the service, timed around the call."""
    samples = []
    for body in bodies:
        params = ContextParams(
            layer_id=body["layer"],
            query=body.get("query", ""),
            query_vector=body.get("query_vector"),
            token_budget=body["token_budget"],
            format=body["format"],
        )
        started = time.perf_counter()
        try:
            answer = context_assemble(workspace=workspace, params=params)
        except DomainError:
            samples.append(Sample((time.perf_counter() - started) * 1000, False))
            continue
        ms = (time.perf_counter() - started) * 1000
        samples.append(Sample(ms, True, answer.total_tokens, answer.partial, answer.cached))
    return samples


def post_once(conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]) -> Sample:
    """One POST on a keep-alive connection, timed; a failure names its status and error code."""
    started = time.perf_counter()
    try:
        conn.request("POST", path, body, headers)
        response = conn.getresponse()
        payload = response.read()
    except (OSError, http.client.HTTPException) as exc:
        conn.close()  # the next request reconnects
        return Sample((time.perf_counter() - started) * 1000, False, error=type(exc).__name__)
    ms = (time.perf_counter() - started) * 1000
    if response.status == 200:
        return _sample(ms, json.loads(payload), server_timing.parse(response.getheader("Server-Timing")))
    try:
        code = json.loads(payload)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = "?"
    try:
        retry_after = float(response.getheader("Retry-After") or 0)
    except ValueError:
        retry_after = 0.0
    return Sample(ms, False, error=f"{response.status} {code}", retry_after=retry_after)


def run_http(*, url: str, secret: str, bodies: list[dict[str, Any]], concurrency: int) -> tuple[list[Sample], float]:
    """The bodies over `concurrency` keep-alive connections at once; the samples and the wall time in seconds."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") + "/api/v1/context/"
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    pending = [json.dumps(body).encode() for body in reversed(bodies)]  # encoded before the clock starts
    samples: list[Sample] = []
    lock = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
        while True:
            with lock:
                if not pending:
                    break
                body = pending.pop()
            samples.append(post_once(conn, path, body, headers))
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples, time.perf_counter() - started
