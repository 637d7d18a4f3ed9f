"""The request body cap, enforced in front of Django: an oversized body is refused unread.

Django's ASGI handler reads the whole body before any middleware runs, and DRF parses it without
DATA_UPLOAD_MAX_MEMORY_SIZE, so a 100 MB body used to be read and parsed for 25 s before its 400.
Here a declared `Content-Length` over `MAX_REQUEST_BODY_BYTES` is answered 413 at once, and a
body sent without one (chunked) is counted as it arrives and cut off at the cap.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from apps.core import errors

Scope = dict[str, Any]
Message = dict[str, Any]


def too_large_body(limit: int) -> bytes:
    return json.dumps(
        {
            "error": {
                "code": errors.REQUEST_TOO_LARGE.code,
                "message": f"the request body is limited to {limit} bytes",
                "details": {"limit_bytes": limit},
            }
        }
    ).encode()


async def _send_413(send: Any, limit: int) -> None:
    body = too_large_body(limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimitMiddleware:
    """ASGI middleware: HTTP requests whose body passes the cap get a 413 and never reach Django."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.MAX_REQUEST_BODY_BYTES
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await _send_413(send, limit)
            return
        received = 0
        cut_off = False

        async def counted_receive() -> Message:
            nonlocal received, cut_off
            message: Message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:  # no (or a false) Content-Length: stop reading, Django sees a disconnect
                    cut_off = True
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, counted_receive, send)
        if cut_off:
            await _send_413(send, limit)
