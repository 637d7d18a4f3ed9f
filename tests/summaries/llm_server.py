"""A local OpenAI-compatible chat endpoint for the LLM tests, which can be told to fail N times."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = {
    "sentence": "The payments team fixed the retry storm by honouring Retry-After.",
    "paragraph": "The payments team owns the charge service. On 4 March its retry worker ignored Retry-After "
    "and overloaded Stripe; the fix honours Retry-After and keeps three retries.",
    "detailed": "The payments team owns the charge service and its retry worker. Charges are retried three times "
    "with exponential backoff. On 4 March the worker ignored Retry-After and overloaded Stripe. The fix honours "
    "Retry-After, keeps the cap of three retries and ships behind a flag.",
}


@dataclass
class FakeLlm:
    """State shared with the handler: failures to serve first, what was asked, when."""

    port: int = 0
    fail_next: int = 0
    reply: dict[str, str] = field(default_factory=lambda: dict(REPLY))
    requests: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    on_request: Callable[[], None] | None = None  # runs while the caller waits for the answer
    respond: Callable[[dict[str, Any]], Any] | None = None  # the reply made from the request, instead of `reply`

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handler(state: FakeLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.times.append(time.monotonic())
            if state.on_request is not None:
                state.on_request()
            if state.fail_next > 0:
                state.fail_next -= 1
                self._send(500, {"error": {"message": "upstream overloaded", "type": "server_error"}})
                return
            content = json.dumps(state.reply if state.respond is None else state.respond(body))
            self._send(
                200,
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def fake_llm() -> Iterator[FakeLlm]:
    state = FakeLlm()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
