"""Whether the client of an HTTP request has gone away, for sync views that run long.

Django's ASGI handler notices a client that disconnects before the response (it listens for
`http.disconnect` while the view runs) but can only cancel async code: a sync view goes on in its
thread. `ClientGoneMiddleware` (in front of Django, contextarch/asgi.py) puts a `threading.Event`
in the request's scope and sets it when that message arrives; `client_gone(request)` hands a view
the event's `is_set`, to pass on as a cancel (e.g. `context_preview(cancelled=...)`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from django.http import HttpRequest

log = logging.getLogger(__name__)

SCOPE_KEY = "client_gone"
Scope = dict[str, Any]
Message = dict[str, Any]


class ClientGoneMiddleware:
    """ASGI: an Event in `scope["client_gone"]`, set when the client disconnects (HTTP only)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = threading.Event()

        async def watched() -> Message:
            message = await receive()
            if message["type"] == "http.disconnect" and not gone.is_set():
                gone.set()
                log.info("client went away before the response: %s", scope.get("path", ""))
            return message

        await self.app({**scope, SCOPE_KEY: gone}, watched, send)


def client_gone(request: HttpRequest) -> Callable[[], bool] | None:
    """The request's "has the client gone?" check; None outside ASGI (tests' Client, WSGI)."""
    gone = getattr(request, "scope", {}).get(SCOPE_KEY)
    return gone.is_set if isinstance(gone, threading.Event) else None
