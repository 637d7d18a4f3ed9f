"""The one DRF exception handler: every error is `{"error": {"code", "message", "details"}}`."""
from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from apps.core.errors import DomainError

log = logging.getLogger(__name__)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _validation_code(detail: Any) -> tuple[str, str]:
    """A specific code from the first failing field: {"token_budget": [...]} → invalid_token_budget."""
    if isinstance(detail, dict) and detail:
        field, errors = next(iter(detail.items()))
        first = errors[0] if isinstance(errors, list) and errors else errors
        if isinstance(first, dict):  # nested (e.g. bulk items) → recurse for the message
            _, message = _validation_code(first)
        else:
            message = str(first)
        if field == "non_field_errors":
            return "invalid_input", message
        if str(field).isdigit():
            return "invalid_items", f"item {field}: {message}"
        return f"invalid_{field}", f"{field}: {message}"
    if isinstance(detail, list) and detail:
        return "invalid_input", str(detail[0])
    return "invalid_input", str(detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status)
    if isinstance(exc, (Http404, exceptions.NotFound)):
        return Response(error_body("not_found", "Not found."), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, exceptions.ValidationError):
        code, message = _validation_code(exc.detail)
        return Response(error_body(code, message, {"fields": exc.detail}), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.ParseError):
        return Response(error_body("malformed_json", str(exc.detail)), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Response(error_body("unsupported_media_type", str(exc.detail)), status=exc.status_code)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        response = exception_handler(exc, context)
        code = "not_authenticated" if isinstance(exc, exceptions.NotAuthenticated) else "invalid_api_key"
        status_code = response.status_code if response is not None else 401
        body = Response(error_body(code, str(exc.detail)), status=status_code)
        if response is not None and "WWW-Authenticate" in response:
            body["WWW-Authenticate"] = response["WWW-Authenticate"]
        return body
    if isinstance(exc, (exceptions.PermissionDenied, PermissionDenied)):
        return Response(error_body("permission_denied", "Not allowed."), status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, exceptions.MethodNotAllowed):
        return Response(error_body("method_not_allowed", str(exc.detail)), status=exc.status_code)
    if isinstance(exc, exceptions.Throttled):
        return Response(error_body("throttled", str(exc.detail)), status=exc.status_code)
    if isinstance(exc, exceptions.APIException):
        return Response(error_body(exc.default_code, str(exc.detail)), status=exc.status_code)
    return None
