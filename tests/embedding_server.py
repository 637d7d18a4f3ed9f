"""A local OpenAI-compatible /v1/embeddings endpoint that can be slow or down, for embedder tests."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def vector_of(text: str, dimensions: int = 384) -> list[float]:
    """A deterministic unit vector for `text` (its hash seeds the generator)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    return [float(x) for x in vector / np.linalg.norm(vector)]


@dataclass
class FakeEmbedder:
    """What the endpoint was asked, how long it sleeps before answering, and whether it fails."""

    port: int = 0
    delay: float = 0.0
    failing: bool = False
    inputs: list[list[str]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handler(state: FakeEmbedder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            state.inputs.append(texts)
            state.started.set()
            time.sleep(state.delay)
            if state.failing:
                self._send(503, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            data = [{"object": "embedding", "index": i, "embedding": vector_of(t)} for i, t in enumerate(texts)]
            usage = {"prompt_tokens": 0, "total_tokens": 0}
            self._send(200, {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": usage})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@contextmanager
def fake_embedder(delay: float = 0.0) -> Iterator[FakeEmbedder]:
    state = FakeEmbedder(delay=delay)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
