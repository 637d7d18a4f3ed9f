"""`Server-Timing` on every response: where the server spent a request's time.

`note(name, ms)` adds one figure to the current request's header (e.g. apps/core/fair_share.py: how
long a heavy request waited for its process's slot, `slot-wait`, and how long it held it, `slot`);
the middleware adds `app`, the time from the request's arrival (`ca.arrived`, set by the first
middleware) to its response. Operators read it in a browser's network panel or a proxy's log;
`manage.py bench_tenants` reads it to say whether a victim's latency is queueing or work. Only
durations: no name, id or text of the request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

_figures: ContextVar[list[tuple[str, float]] | None] = ContextVar("server_timing", default=None)


def note(name: str, ms: float) -> None:
    """One figure (a token name, milliseconds) for the current request's header; a no-op outside one."""
    figures = _figures.get()
    if figures is not None:
        figures.append((name, ms))


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        figures: list[tuple[str, float]] = []
        token = _figures.set(figures)
        try:
            response = self.get_response(request)
        finally:
            _figures.reset(token)
        arrived = request.META.get("ca.arrived")
        if isinstance(arrived, float):
            figures.append(("app", (time.perf_counter() - arrived) * 1000))
        response["Server-Timing"] = ", ".join(f"{name};dur={ms:.1f}" for name, ms in figures)
        return response


def parse(header: str | None) -> tuple[tuple[str, float], ...]:
    """`slot-wait;dur=1.0, slot;dur=20.1` as (name, ms) pairs; what does not parse is left out."""
    figures = []
    for metric in (header or "").split(","):
        name, _, params = metric.strip().partition(";")
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "dur":
                try:
                    figures.append((name, float(value)))
                except ValueError:
                    pass
    return tuple(figures)
