"""Warnings about degraded service for the current request (a dependency failed; the answer stands).

A part that falls back (background work run in-process because the broker is down, ...) calls
`note()`; `DegradedWarningsMiddleware` puts the notes on the response: a `Warning` header always,
and a `warnings` list in a JSON object body. Outside a request `note()` only logs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

log = logging.getLogger(__name__)

_notes: ContextVar[list[str] | None] = ContextVar("degraded_notes", default=None)


def note(message: str) -> None:
    """Record that this request was served degraded (once per message)."""
    notes = _notes.get()
    if notes is None:
        log.warning("degraded outside a request: %s", message)
    elif message not in notes:
        notes.append(message)


def _with_warnings(response: HttpResponse, notes: list[str]) -> None:
    ours = ", ".join(f'199 contextarch "{n}"' for n in notes)
    response["Warning"] = f"{response['Warning']}, {ours}" if response.has_header("Warning") else ours
    if response.streaming or not response.get("Content-Type", "").startswith("application/json"):
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        return
    if isinstance(body, dict):
        existing = body.get("warnings")
        body["warnings"] = [*(existing if isinstance(existing, list) else []), *notes]
        response.content = json.dumps(body).encode()
        if response.has_header("Content-Length"):
            response["Content-Length"] = str(len(response.content))


class DegradedWarningsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        notes: list[str] = []
        token = _notes.set(notes)
        try:
            response = self.get_response(request)
        finally:
            _notes.reset(token)
        if notes:
            _with_warnings(response, notes)
        return response
