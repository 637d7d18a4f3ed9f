"""One SERVER span per HTTP request, a child of the caller's span when a `traceparent` came with it.

The assembly and history spans opened by the view are its children. The span holds the method, the
route pattern and the status, never the path, the query string, the headers or the body (where keys,
invitation tokens and pasted secrets travel). Static files and the Prometheus scrape are not traced.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from opentelemetry.trace import SpanKind, StatusCode

from apps.core.telemetry import propagation, spans

UNTRACED = ("/metrics", "/favicon.ico")


class TraceContextMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not spans.tracing() or _untraced(request.path):
            return self.get_response(request)
        carrier = {name: value for name in propagation.FIELDS if (value := request.headers.get(name))}
        attributes = {"http.request.method": request.method or ""}  # not the path: a link's token may be in it
        with (
            propagation.continued(carrier),
            spans.operation(request.method or "HTTP", attributes, kind=SpanKind.SERVER) as span,
        ):
            response = self.get_response(request)
            if span is not None:
                if route := _route(request):
                    span.update_name(f"{request.method} {route}")
                    span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", response.status_code)
                if response.status_code >= 500:
                    span.set_status(StatusCode.ERROR)
                    span.set_attribute("error.type", str(response.status_code))
            return response


def _untraced(path: str) -> bool:
    return path.startswith(UNTRACED) or bool(settings.STATIC_URL and path.startswith(settings.STATIC_URL))


def _route(request: HttpRequest) -> str:
    """The matched URL pattern, never the path itself: ids and tokens stay `<int:pk>`, `<str:token>`
    (an invitation link's token is a secret). A regular expression loses its anchors."""
    match = request.resolver_match
    route = (getattr(match, "route", "") or "") if match is not None else ""
    return "/" + route.removeprefix("^").removesuffix("$") if route else ""
