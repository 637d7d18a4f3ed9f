"""Error pages: JSON in the API's error shape under /api/, the styled 403/404/500 templates elsewhere."""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from apps.core import db_health
from apps.core.exceptions import error_body


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("permission_denied", "Permission denied."), status=403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """A lost database (or its timeout) is a 503 with Retry-After; anything else a 500."""
    error = sys.exc_info()[1]  # Django calls the 500 handler while handling the exception
    outage = db_health.classify(error) if error is not None else None
    if outage is None and (db_health.database_down() or not db_health.probe()):
        outage = "unavailable"  # a knock-on error (a broken transaction, ...) while the database is gone
    if outage is not None:
        if outage == "unavailable":
            db_health.mark_down()
        return db_health.unavailable_response(request, outage)
    if _is_api(request):
        return JsonResponse(error_body("server_error", "Internal error; it has been logged."), status=500)
    return defaults.server_error(request)
