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
    by_model: bool = False  # vectors depend on the model asked for too (two "models" of one endpoint)
    inputs: list[list[str]] = field(default_factory=list)
    active: int = 0  # requests being answered now
    most_active: int = 0  # the most answered at once
    started: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


_counting = threading.Lock()


def _handler(state: FakeEmbedder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            state.inputs.append(texts)
            state.started.set()
            with _counting:
                state.active += 1
                state.most_active = max(state.most_active, state.active)
            time.sleep(state.delay)
            with _counting:
                state.active -= 1
            if state.failing:
                self._send(503, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            model = str(body.get("model", "fake"))
            data = [
                {"object": "embedding", "index": i, "embedding": vector_of(f"{model}\x00{t}" if state.by_model else t)}
                for i, t in enumerate(texts)
            ]
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
def fake_embedder(delay: float = 0.0, *, by_model: bool = False) -> Iterator[FakeEmbedder]:
    state = FakeEmbedder(delay=delay, by_model=by_model)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
