"""The one local HTTP server standing in for a remote model provider: OpenAI-compatible (chat
completions, the Responses API, embeddings, the model list) or Anthropic (Messages).

It records every request (path, lower-case headers, JSON body, when) and answers as the provider
would, by path: `.../chat/completions`, `.../responses` and `.../messages` with `reply` (whole, or
with `"stream": true` as server-sent events, one piece of `reply` per event, `gap` seconds apart),
`.../embeddings` with a deterministic unit vector per input (`vector_of`), `GET .../models` with
one model; any other path answers 404.

Scripting: `reply` is the assistant's text (a tuple: the pieces of a stream; a dict or list: sent
as its JSON, as a structured-output model would); `respond(body)` computes it per request instead.
`fail_next(count, status)` makes the next calls answer `status` with the provider's error body
(a 429 says Retry-After: 7); `down` makes every call answer 503 until it is cleared. `delay` sleeps
that long before answering; `on_request` runs while the caller waits; `hold` (an Event) keeps each
answer back until the test sets it, a handshake instead of a sleep (`held_too_long` counts answers
that waited out `hold_timeout`). `active` and `most_active` count requests being answered at once.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.support.live import PORTS, port_free_in

MODELS = {"object": "list", "data": [{"id": "gpt-4o", "object": "model", "created": 0, "owned_by": "fake"}]}


def vector_of(text: str, dimensions: int = 384) -> list[float]:
    """A deterministic unit vector for `text` (its hash seeds the generator)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    return [float(x) for x in vector / np.linalg.norm(vector)]


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float  # time.monotonic() when it arrived


@dataclass
class FakeProvider:
    kind: str = "openai"  # "openai": `url` ends in /v1 (as OpenAI's SDK expects); "anthropic": the root
    url: str = ""
    reply: Any = ("The backups ", "run nightly ", "at 02:00 UTC.")
    respond: Callable[[dict[str, Any]], Any] | None = None
    model: str = "gpt-4o"  # the model an answer names when the request names none
    prompt_tokens: int = 1234
    completion_tokens: int = 9
    gap: float = 0.0
    delay: float = 0.0
    on_request: Callable[[], None] | None = None
    hold: threading.Event | None = None
    hold_timeout: float = 60.0
    held_too_long: int = 0
    down: bool = False
    fail: list[int] = field(default_factory=list)
    by_model: bool = False  # embeddings depend on the model asked for too (two "models" of one endpoint)
    received: list[Received] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)  # set by the first request
    active: int = 0
    most_active: int = 0
    finished_at: list[float] = field(default_factory=list)  # time.monotonic() after each stream's last piece
    dropped_at: list[float] = field(default_factory=list)  # time.monotonic() when the client closed a stream
    _counting: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, count: int, status: int = 500) -> None:
        """The next `count` calls answer `status` (0: none fails any more)."""
        self.fail[:] = [status] * count

    @property
    def last(self) -> Received:
        return self.received[-1]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the model calls (not the model list), in order."""
        return [r.body for r in self.received if r.method == "POST"]

    @property
    def times(self) -> list[float]:
        return [r.at for r in self.received if r.method == "POST"]

    @property
    def inputs(self) -> list[list[str]]:
        """The texts of each embeddings call."""
        return [_texts(r.body) for r in self.received if r.path.endswith("/embeddings")]

    def text(self, body: dict[str, Any]) -> tuple[str, ...]:
        """The pieces of the reply to `body`."""
        reply = self.reply if self.respond is None else self.respond(body)
        if isinstance(reply, str):
            return (reply,)
        if isinstance(reply, tuple):
            return reply
        return (json.dumps(reply),)

    def system_prompt(self, index: int = -1) -> str:
        """The system text of one call (all system messages or blocks, joined)."""
        body = self.requests[index]
        if self.kind == "anthropic":
            system = body.get("system")
            return system if isinstance(system, str) else "\n".join(b["text"] for b in system or ())
        if "input" in body:
            items = body["input"] if isinstance(body["input"], list) else []
            texts = [i["content"] for i in items if i.get("role") in ("system", "developer")]
            return "\n".join([body.get("instructions") or "", *texts])
        return "\n".join(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))


def _texts(body: dict[str, Any]) -> list[str]:
    return body["input"] if isinstance(body["input"], list) else [body["input"]]


def _usage(up: FakeProvider) -> dict[str, int]:
    total = up.prompt_tokens + up.completion_tokens
    return {"prompt_tokens": up.prompt_tokens, "completion_tokens": up.completion_tokens, "total_tokens": total}


def _chat_whole(up: FakeProvider, pieces: tuple[str, ...], n: int, model: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": "".join(pieces)}
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": _usage(up),
    }


def _chat_events(
    up: FakeProvider, pieces: tuple[str, ...], n: int, model: str, body: dict[str, Any]
) -> list[dict[str, Any] | str]:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": model}
    events: list[dict[str, Any] | str] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    ]
    events += [{**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append({**base, "choices": [], "usage": _usage(up)})
    events.append("[DONE]")
    return events


def _responses_whole(up: FakeProvider, pieces: tuple[str, ...], n: int, model: str) -> dict[str, Any]:
    text = {"type": "output_text", "text": "".join(pieces), "annotations": []}
    message = {"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant", "content": [text]}
    usage = {
        "input_tokens": up.prompt_tokens,
        "output_tokens": up.completion_tokens,
        "total_tokens": up.prompt_tokens + up.completion_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "output": [message],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        "usage": usage,
    }


def _responses_events(up: FakeProvider, pieces: tuple[str, ...], n: int, model: str) -> list[dict[str, Any]]:
    whole = _responses_whole(up, pieces, n, model)
    started = {**whole, "output": [], "status": "in_progress", "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    events += [
        {"type": "response.output_text.delta", "item_id": f"msg_{n}", "output_index": 0, "content_index": 0, "delta": p}
        for p in pieces
    ]
    events.append({"type": "response.completed", "response": whole})
    return [{**e, "sequence_number": s} for s, e in enumerate(events)]


def _anthropic_whole(up: FakeProvider, pieces: tuple[str, ...], n: int, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "".join(pieces)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": up.prompt_tokens, "output_tokens": up.completion_tokens},
    }


def _anthropic_events(up: FakeProvider, pieces: tuple[str, ...], n: int, model: str) -> list[dict[str, Any]]:
    start = {**_anthropic_whole(up, pieces, n, model), "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": up.prompt_tokens, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in pieces]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": up.completion_tokens},
        },
        {"type": "message_stop"},
    ]
    return events


def _embeddings(up: FakeProvider, body: dict[str, Any]) -> dict[str, Any]:
    model = str(body.get("model", "fake"))
    data = [
        {"object": "embedding", "index": i, "embedding": vector_of(f"{model}\x00{t}" if up.by_model else t)}
        for i, t in enumerate(_texts(body))
    ]
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 0, "total_tokens": 0}}


def _error(anthropic: bool, status: int) -> dict[str, Any]:
    if anthropic:
        kind = "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": "no"}}
    return {"error": {"message": f"fake upstream says {status}", "type": "server_error", "code": None}}


@contextmanager
def fake_provider(kind: str = "openai", **scripted: Any) -> Iterator[FakeProvider]:
    """A running stand-in (fields of `FakeProvider` in `scripted`), stopped on exit."""
    up = FakeProvider(kind=kind, **scripted)

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

        def _record(self, body: dict[str, Any]) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            up.received.append(Received(self.command, self.path, headers, body, time.monotonic()))
            up.started.set()

        def do_GET(self) -> None:
            self._record({})
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, MODELS)
            else:
                self._json(404, {})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            self._record(body)
            n = len(up.received)
            path = self.path.rstrip("/")
            route = next(
                (r for r in ("/chat/completions", "/responses", "/messages", "/embeddings") if path.endswith(r)), ""
            )
            if not route:
                self._json(404, {})
                return
            with up._counting:
                up.active += 1
                up.most_active = max(up.most_active, up.active)
            try:
                if up.on_request is not None:
                    up.on_request()
                if up.hold is not None and not up.hold.wait(up.hold_timeout):
                    up.held_too_long += 1
                if up.delay:
                    time.sleep(up.delay)
            finally:
                with up._counting:
                    up.active -= 1
            anthropic = route == "/messages"
            if up.down or up.fail:
                status = 503 if up.down else up.fail.pop(0)
                self._json(status, _error(anthropic, status), {"Retry-After": "7"} if status == 429 else None)
                return
            if route == "/embeddings":
                self._json(200, _embeddings(up, body))
                return
            pieces = up.text(body)
            model = str(body.get("model") or up.model)
            if not body.get("stream"):
                whole = _anthropic_whole if anthropic else _responses_whole if route == "/responses" else _chat_whole
                self._json(200, whole(up, pieces, n, model))
                return
            self._stream(route, pieces, n, model, body)

        def _stream(self, route: str, pieces: tuple[str, ...], n: int, model: str, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events: list[dict[str, Any] | str] = []
            if route == "/messages":
                events += _anthropic_events(up, pieces, n, model)
            elif route == "/responses":
                events += _responses_events(up, pieces, n, model)
            else:
                events += _chat_events(up, pieces, n, model, body)
            for event in events:
                if isinstance(event, str):
                    data = f"data: {event}\n\n"
                elif route != "/chat/completions":
                    data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                else:
                    data = f"data: {json.dumps(event)}\n\n"
                is_text = isinstance(event, dict) and "delta" in json.dumps(event)
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
        if up.hold is not None:
            up.hold.set()  # no handler thread waits on past the test
        server.shutdown()
        server.server_close()
