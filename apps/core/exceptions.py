"""The one DRF exception handler: every error is `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from apps.core import errors
from apps.core.client_gone import CLIENT_CLOSED_REQUEST
from apps.core.deadline import Cancelled
from apps.core.errors import DomainError, TooManyRequests
from apps.core.field_errors import field_code

log = logging.getLogger(__name__)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_error(detail: Any, path: str = "") -> tuple[str, str] | None:
    """The path and message of the first error in a (possibly nested) DRF error structure."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            found = _first_error(value, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            if isinstance(value, (dict, list)):
                found = _first_error(value, f"{path}[{index}]")
                if found:
                    return found
            elif value:
                return path, str(value)
        return None
    return (path, str(detail)) if detail else None


def _validation_code(detail: Any) -> tuple[str, str]:
    """The code mapped to the first failing top-level field (apps/core/field_errors.py): {"token_budget":
    [...]} → invalid_token_budget."""
    found = _first_error(detail)
    if not found:
        return errors.INVALID_INPUT.code, errors.INVALID_INPUT.message
    path, message = found
    field = path.split(".")[0].split("[")[0]
    if not field or field == "non_field_errors":
        return errors.INVALID_INPUT.code, message
    return field_code(field).code, f"{path.replace('.non_field_errors', '')}: {message}"


def validation_error_body(detail: Any) -> dict[str, Any]:
    """The body of a 400 for a DRF ValidationError, with the API's codes (also for views outside DRF)."""
    code, message = _validation_code(detail)
    return error_body(code, message, {"fields": detail})


def _database_error(exc: DatabaseError) -> Response | None:
    """A lost database, its timeout or no pooled connection free (overloaded): 503 with Retry-After
    (apps/core/db_health.py); else None (a 500)."""
    from apps.core import db_health  # db_health renders its own answers with error_body from here

    outage = db_health.classify(exc)
    if outage is None:
        return None
    db_health.note_outage(outage, exc)
    if outage != "overloaded":  # an overload is logged (once in a while) by note_outage
        log.warning("database %s: %s", outage, exc)
    code, message, retry_after = db_health.outage_answer(outage)
    answer = Response(error_body(code, message), status=503)
    answer["Retry-After"] = str(retry_after)
    return answer


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DatabaseError):
        return _database_error(exc)
    if isinstance(exc, Cancelled):  # the client left (apps/core/client_gone.py): nobody reads this answer
        return Response(status=CLIENT_CLOSED_REQUEST)
    if isinstance(exc, DomainError):
        answer = Response(error_body(exc.code, exc.message, exc.details), status=exc.status)
        if isinstance(exc, TooManyRequests):
            answer["Retry-After"] = str(exc.retry_after)
        return answer
    if isinstance(exc, (Http404, exceptions.NotFound)):
        return Response(error_body(errors.NOT_FOUND.code, errors.NOT_FOUND.message), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, exceptions.ValidationError):
        return Response(validation_error_body(exc.detail), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.ParseError):
        return Response(error_body(errors.MALFORMED_JSON.code, str(exc.detail)), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Response(error_body(errors.UNSUPPORTED_MEDIA_TYPE.code, str(exc.detail)), status=exc.status_code)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        response = exception_handler(exc, context)
        code = errors.NOT_AUTHENTICATED if isinstance(exc, exceptions.NotAuthenticated) else errors.INVALID_API_KEY
        status_code = response.status_code if response is not None else 401
        body = Response(error_body(code.code, str(exc.detail)), status=status_code)
        if response is not None and "WWW-Authenticate" in response:
            body["WWW-Authenticate"] = response["WWW-Authenticate"]
        return body
    if isinstance(exc, (exceptions.PermissionDenied, PermissionDenied)):
        return Response(
            error_body(errors.PERMISSION_DENIED.code, errors.PERMISSION_DENIED.message),
            status=status.HTTP_403_FORBIDDEN,
        )
    if isinstance(exc, exceptions.MethodNotAllowed):
        return Response(error_body(errors.METHOD_NOT_ALLOWED.code, str(exc.detail)), status=exc.status_code)
    if isinstance(exc, exceptions.Throttled):
        return Response(error_body(errors.THROTTLED.code, str(exc.detail)), status=exc.status_code)
    if isinstance(exc, exceptions.APIException):
        return Response(error_body(exc.default_code, str(exc.detail)), status=exc.status_code)
    return None
