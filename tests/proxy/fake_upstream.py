"""A local HTTP server standing in for an LLM provider (OpenAI-compatible or Anthropic).

It records every request it receives (path, headers, JSON body) and answers as the provider would:
a whole reply, or a stream of server-sent events in several pieces sent `gap` seconds apart, noting
when it sent its last piece. `fail` makes the next calls answer that status with the provider's
error body instead; `hang` makes it wait that long before answering.
"""

from __future__ import annotations

import http.server
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.live import PORTS, port_free_in

MODELS = {"object": "list", "data": [{"id": "gpt-4o", "object": "model", "created": 0, "owned_by": "fake"}]}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeUpstream:
    kind: str  # "openai" or "anthropic"
    url: str = ""
    reply: tuple[str, ...] = ("The backups ", "run nightly ", "at 02:00 UTC.")
    gap: float = 0.0
    fail: list[int] = field(default_factory=list)
    hang: float = 0.0
    prompt_tokens: int = 1234
    received: list[Received] = field(default_factory=list)
    finished_at: list[float] = field(default_factory=list)  # time.monotonic() after each stream's last piece
    dropped_at: list[float] = field(default_factory=list)  # time.monotonic() when the proxy closed a stream

    @property
    def last(self) -> Received:
        return self.received[-1]

    def system_prompt(self, index: int = -1) -> str:
        """The system text the upstream received in one call (all system messages or blocks, joined)."""
        body = self.received[index].body
        if self.kind == "anthropic":
            system = body.get("system")
            return system if isinstance(system, str) else "\n".join(b["text"] for b in system or ())
        if "input" in body:
            items = body["input"] if isinstance(body["input"], list) else []
            texts = [i["content"] for i in items if i.get("role") in ("system", "developer")]
            return "\n".join([body.get("instructions") or "", *texts])
        return "\n".join(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))


def _openai_whole(up: FakeUpstream) -> dict[str, Any]:
    text = "".join(up.reply)
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": up.prompt_tokens, "completion_tokens": 9, "total_tokens": up.prompt_tokens + 9},
    }


def _openai_events(up: FakeUpstream, body: dict[str, Any]) -> list[dict[str, Any] | str]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o"}
    events: list[dict[str, Any] | str] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    ]
    events += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in up.reply]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {"prompt_tokens": up.prompt_tokens, "completion_tokens": 9, "total_tokens": up.prompt_tokens + 9}
        events.append({**base, "choices": [], "usage": usage})
    events.append("[DONE]")
    return events


def _responses_whole(up: FakeUpstream) -> dict[str, Any]:
    text = {"type": "output_text", "text": "".join(up.reply), "annotations": []}
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [text]}
    usage = {
        "input_tokens": up.prompt_tokens,
        "output_tokens": 9,
        "total_tokens": up.prompt_tokens + 9,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-4o",
        "output": [message],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        "usage": usage,
    }


def _responses_events(up: FakeUpstream) -> list[dict[str, Any]]:
    whole = _responses_whole(up)
    started = {**whole, "output": [], "status": "in_progress", "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    events += [
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": p}
        for p in up.reply
    ]
    events.append({"type": "response.completed", "response": whole})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


def _anthropic_whole(up: FakeUpstream) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-5",
        "content": [{"type": "text", "text": "".join(up.reply)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": up.prompt_tokens, "output_tokens": 9},
    }


def _anthropic_events(up: FakeUpstream) -> list[dict[str, Any]]:
    start = {**_anthropic_whole(up), "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": up.prompt_tokens, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in up.reply
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return events


def _error(kind: str, status: int) -> dict[str, Any]:
    if kind == "anthropic":
        return {
            "type": "error",
            "error": {"type": "rate_limit_error" if status == 429 else "api_error", "message": "no"},
        }
    return {"error": {"message": f"fake upstream says {status}", "type": "server_error", "code": None}}


@contextmanager
def fake_upstream(kind: str) -> Iterator[FakeUpstream]:
    up = FakeUpstream(kind=kind)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _json(self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            up.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, {}))
            self._json(200, MODELS)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            up.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if up.hang:
                time.sleep(up.hang)
            if up.fail:
                status = up.fail.pop(0)
                self._json(status, _error(up.kind, status), {"Retry-After": "7"} if status == 429 else None)
                return
            responses = self.path.endswith("/responses")
            if not body.get("stream"):
                whole = _anthropic_whole if up.kind == "anthropic" else _responses_whole if responses else _openai_whole
                self._json(200, whole(up))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events: list[dict[str, Any] | str] = []
            if up.kind == "anthropic":
                events += _anthropic_events(up)
            else:
                events += _responses_events(up) if responses else _openai_events(up, body)
            for event in events:
                if isinstance(event, str):
                    data = f"data: {event}\n\n"
                elif up.kind == "anthropic" or responses:
                    data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                else:
                    data = f"data: {json.dumps(event)}\n\n"
                is_text = "delta" in json.dumps(event) and isinstance(event, dict)
                try:
                    self._chunk(data.encode())
                    if is_text and up.gap and self._closed_within(up.gap):
                        raise ConnectionResetError
                except (BrokenPipeError, ConnectionResetError):
                    up.dropped_at.append(time.monotonic())
                    self.close_connection = True
                    return
            self._chunk(b"")
            up.finished_at.append(time.monotonic())

        def _closed_within(self, seconds: float) -> bool:
            """Wait `seconds`, or less when the other end closes the connection (then True)."""
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0:
                readable, _, _ = select.select([self.connection], [], [], left)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return True
            return False

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port_free_in(PORTS)), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    root = f"http://127.0.0.1:{server.server_address[1]}"
    up.url = root if kind == "anthropic" else f"{root}/v1"
    try:
        yield up
    finally:
        server.shutdown()
        server.server_close()
