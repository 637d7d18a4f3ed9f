"""Whether the client of an HTTP request has gone away, for sync views that run long.

Django's ASGI handler notices a client that disconnects before the response (it listens for
`http.disconnect` while the view runs) but can only cancel async code: a sync view goes on in its
thread. The service's handler (contextarch/handler.py) puts a `threading.Event` in the request's
scope under SCOPE_KEY and sets it when that message arrives before the view has answered;
`client_gone(request)` hands a view the event's `is_set`, to pass on as a cancel (e.g.
`context_assemble(cancelled=...)`: the context, preview and SSE endpoints, the preview page). A
view that stops on it raises `apps.core.deadline.Cancelled`, which the API answers with 499
(nginx's "client closed request"), which nobody reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.http import HttpRequest
from rest_framework.request import Request

SCOPE_KEY = "client_gone"
CLIENT_CLOSED_REQUEST = 499  # nginx's code for "the client left first": nobody reads this answer


def client_gone(request: HttpRequest | Request) -> Callable[[], bool] | None:
    """The request's "has the client gone?" check; None outside ASGI (tests' Client, WSGI)."""
    gone = getattr(request, "scope", {}).get(SCOPE_KEY)
    return gone.is_set if isinstance(gone, threading.Event) else None
