"""Counts every HTTP request by method, resolved route and status; stamps when it arrived.

`request.META["ca.arrived"]` (time.perf_counter) is set before any other middleware runs, so
deadlines can count from the request's arrival rather than from the view.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from apps.metrics.registry import HTTP_REQUESTS


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.META["ca.arrived"] = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "unmatched"
        HTTP_REQUESTS.labels(method=request.method or "", route=route, status=str(response.status_code)).inc()
        return response
