"""A local HTTP server standing in for OpenAI's Responses API (`POST /v1/responses`): it keeps each
request body and answers one assistant message, so an agent framework runs with no LLM call."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.live import PORTS, port_free_in


@dataclass
class StandIn:
    url: str = ""
    reply: str = "Answered from the context."
    requests: list[dict[str, Any]] = field(default_factory=list)


def response_body(reply: str, number: int) -> dict[str, Any]:
    text = {"type": "output_text", "text": reply, "annotations": []}
    message = {"type": "message", "id": f"msg_{number}", "status": "completed", "role": "assistant", "content": [text]}
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 0,
        "model": "gpt-4.1-mini",
        "output": [message],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        "usage": usage,
    }


@contextmanager
def responses_stand_in() -> Iterator[StandIn]:
    state = StandIn()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            state.requests.append({"path": self.path, **body})
            found = self.path.rstrip("/").endswith("/responses")
            payload = json.dumps(response_body(state.reply, len(state.requests)) if found else {}).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port_free_in(PORTS)), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
