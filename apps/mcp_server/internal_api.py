"""One door from MCP to the agent API: an in-process ASGI request through Django's own handler.

Each tool is an API call made with the MCP request's own API key, so authentication, workspace
scoping, key scopes, rate limits, validation, error codes and response shapes are the API's,
with nothing re-implemented here. No socket is opened: the request goes straight into Django's
`ASGIHandler` (middleware, URL routing, DRF view).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.handlers.asgi import ASGIHandler

# Headers of the MCP request that the API call carries over: the key, the host (ALLOWED_HOSTS)
# and what identifies the client (rate limits per address, request ids in logs).
FORWARDED_HEADERS = frozenset(
    {b"authorization", b"host", b"user-agent", b"x-forwarded-for", b"x-forwarded-proto", b"x-real-ip", b"x-request-id"}
)

_handler: ASGIHandler | None = None


def _django() -> ASGIHandler:
    global _handler
    if _handler is None:
        _handler = ASGIHandler()
    return _handler


@dataclass(frozen=True)
class ApiAnswer:
    """The API's answer: HTTP status and decoded JSON body (None for an empty body)."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status < 400


def _query_string(query: Mapping[str, Any] | None) -> bytes:
    if not query:
        return b""
    pairs = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in query.items() if v not in (None, "")]
    return urlencode(pairs, doseq=True).encode()


async def api_call(
    *,
    origin: Mapping[str, Any],
    method: str,
    path: str,
    query: Mapping[str, Any] | None = None,
    body: Any = None,
) -> ApiAnswer:
    """`method path` on the API as the client of the ASGI scope `origin` (the MCP request)."""
    payload = json.dumps(body).encode() if body is not None else b""
    headers = [(k, v) for k, v in origin.get("headers", []) if k.lower() in FORWARDED_HEADERS]
    headers += [(b"accept", b"application/json"), (b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(payload)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": origin.get("scheme", "http"),
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": _query_string(query),
        "headers": headers,
        "client": origin.get("client"),
        "server": origin.get("server"),
    }
    done = asyncio.Event()
    sent_body = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await done.wait()  # Django listens for a disconnect while the view runs: there is none
        return {"type": "http.disconnect"}

    status = 500
    chunks: list[bytes] = []

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    try:
        await _django()(scope, receive, send)
    finally:
        done.set()
    raw = b"".join(chunks)
    try:
        decoded = json.loads(raw) if raw else None
    except ValueError:
        decoded = {"error": {"code": "unexpected_response", "message": raw[:500].decode(errors="replace")}}
    return ApiAnswer(status=status, body=decoded)
