"""`bench_proxy`: the latency the LLM proxy adds over calling the same upstream directly.

The upstream is a local stand-in for an OpenAI-compatible server (no model: it answers at once,
or streams `pieces` chunks `gap` seconds apart), so what is measured is the proxy alone: storing
the new turns, assembling the context, forwarding, relaying and storing the reply. Direct and
proxied calls alternate in one run, whole and streamed; each proxied call is a new conversation
(its turns are new, its question another, so no assembly is served from the cache).
"""

from __future__ import annotations

import http.server
import json
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class Timing:
    total_ms: float
    first_byte_ms: float  # the first body byte (a streamed answer's first piece)


def _chunk(text: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}
    event = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o", "choices": [choice]}
    return f"data: {json.dumps(event)}\n\n".encode()


@contextmanager
def stand_in_upstream(*, pieces: int, gap: float) -> Iterator[str]:
    """A local OpenAI-compatible server answering every chat completion with `pieces` words."""
    words = [f"word{i} " for i in range(pieces)]
    whole = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(words)}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": pieces, "total_tokens": 100 + pieces},
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if not body.get("stream"):
                data = json.dumps(whole).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [_chunk(w) for w in words] + [_chunk("", "stop"), b"data: [DONE]\n\n"]
            for index, event in enumerate(events):
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
                if gap and index < pieces:
                    time.sleep(gap)
            self.wfile.write(b"0\r\n\r\n")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def timed_call(client: httpx.Client, url: str, headers: dict[str, str], body: dict[str, object]) -> Timing:
    started = time.perf_counter()
    first: float | None = None
    with client.stream("POST", url, headers=headers, json=body) as response:
        for _ in response.iter_raw():
            first = first or time.perf_counter()
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
    ended = time.perf_counter()
    return Timing(round((ended - started) * 1000, 2), round(((first or ended) - started) * 1000, 2))


def quantiles(values: list[float]) -> tuple[float, float]:
    """p50 and p95 (nearest rank)."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def proxy_bench(*, base: str, key: str, upstream: str, calls: int, stream: bool) -> dict[str, list[Timing]]:
    """`calls` direct and `calls` proxied chat completions, alternating; the timings of each."""
    timings: dict[str, list[Timing]] = {"direct": [], "proxy": []}
    with httpx.Client(timeout=60) as client:
        for index in range(calls + 3):  # the first three warm both paths up and are not counted
            question = f"When does backup job {index} of run {time.time_ns()} copy its shard?"
            body: dict[str, object] = {"model": "gpt-4o", "messages": [{"role": "user", "content": question}]}
            if stream:
                body["stream"] = True
            direct = timed_call(client, f"{upstream}/chat/completions", {}, body)
            headers = {"Authorization": f"Bearer {key}", "X-Context-Session": f"bench-{time.time_ns()}"}
            proxied = timed_call(client, f"{base}/proxy/openai/v1/chat/completions", headers, body)
            if index >= 3:
                timings["direct"].append(direct)
                timings["proxy"].append(proxied)
    return timings


def report_lines(name: str, timings: dict[str, list[Timing]]) -> list[str]:
    lines = []
    for path, values in timings.items():
        total, first = quantiles([t.total_ms for t in values]), quantiles([t.first_byte_ms for t in values])
        lines.append(
            f"{name:9} {path:6} total p50 {total[0]:7.1f} ms p95 {total[1]:7.1f} ms | "
            f"first byte p50 {first[0]:7.1f} ms p95 {first[1]:7.1f} ms"
        )
    added = [p.total_ms - d.total_ms for d, p in zip(timings["direct"], timings["proxy"], strict=True)]
    added_first = [p.first_byte_ms - d.first_byte_ms for d, p in zip(timings["direct"], timings["proxy"], strict=True)]
    p50, p95 = quantiles(added)
    f50, f95 = quantiles(added_first)
    lines.append(
        f"{name:9} added  total p50 {p50:7.1f} ms p95 {p95:7.1f} ms | first byte p50 {f50:7.1f} ms p95 {f95:7.1f} ms"
    )
    return lines
