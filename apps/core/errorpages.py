"""Error pages: JSON in the API's error shape under /api/, the styled 403/404/500 templates elsewhere."""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults

from apps.core import db_health, errors
from apps.core.errors import TooManyRequests
from apps.core.exceptions import error_body


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body(errors.PERMISSION_DENIED.code, "Permission denied."), status=403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body(errors.NOT_FOUND.code, errors.NOT_FOUND.message), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """A lost database (or its timeout, or no pooled connection free) is a 503 with Retry-After;
    anything else a 500."""
    error = sys.exc_info()[1]  # Django calls the 500 handler while handling the exception
    if isinstance(error, TooManyRequests):  # a page's call into a service found the workspace's share taken
        return _too_many(request, error)
    outage = db_health.classify(error) if error is not None else None
    if outage is None and (db_health.database_down() or not db_health.probe()):
        outage = "unavailable"  # a knock-on error (a broken transaction, ...) while the database is gone
    if outage is not None:
        db_health.note_outage(outage, error)
        return db_health.unavailable_response(request, outage)
    if _is_api(request):
        return JsonResponse(error_body(errors.SERVER_ERROR.code, errors.SERVER_ERROR.message), status=500)
    return defaults.server_error(request)


def _too_many(request: HttpRequest, error: TooManyRequests) -> HttpResponse:
    """429 with Retry-After: what the API answers, and a page that says so (not a 500)."""
    if _is_api(request):
        response: HttpResponse = JsonResponse(error_body(error.code, error.message, error.details), status=429)
    else:
        context = {"message": error.message.capitalize() + ".", "retry_after": error.retry_after}
        response = render(request, "429.html", context, status=429)
    response["Retry-After"] = str(error.retry_after)
    return response
