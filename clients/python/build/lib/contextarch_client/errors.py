"""Exceptions per family of the API's stable error codes: branch on the class, or on `code`."""

from __future__ import annotations

from typing import Any


class ContextArchError(Exception):
    """Any error answer of the API (`{"error": {"code", "message", "details"}}`) or of the transport."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "error",
        status: int | None = None,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}" if status is None else f"{status} {code}: {message}")
        self.message = message
        self.code = code
        self.status = status
        self.details = details or {}
        self.retry_after = retry_after


class ConnectionFailed(ContextArchError):
    """The service could not be reached (refused, reset, timed out) after the retries allowed."""


class InvalidRequest(ContextArchError):
    """400: bad input (`invalid_<field>`, `missing_layer`, `malformed_json`, ...)."""


class AuthenticationFailed(ContextArchError):
    """401: no key, or an unknown or revoked one (`not_authenticated`, `invalid_api_key`)."""


class PermissionDenied(ContextArchError):
    """403: the key may not do this (e.g. a key without the scope)."""


class NotFound(ContextArchError):
    """404: missing, or in another workspace (`layer_not_found`, `trace_not_found`, ...)."""


class Conflict(ContextArchError):
    """409: the request contradicts the stored state (e.g. another consumption report for a trace)."""


class RateLimited(ContextArchError):
    """429: too many requests; `retry_after` is the server's `Retry-After` in seconds, when given."""


class ServerError(ContextArchError):
    """5xx: the service failed or is unavailable (`service_unavailable`, ...)."""


_BY_STATUS: dict[int, type[ContextArchError]] = {
    400: InvalidRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    429: RateLimited,
}


def error_for(status: int, body: Any, retry_after: float | None = None) -> ContextArchError:
    """The exception for an error answer: its class from the status, its code and message from the body."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code, message, details = str(error.get("code", "error")), str(error.get("message", "")), error.get("details")
    else:
        code, message, details = f"http_{status}", str(body)[:500], None
    family = _BY_STATUS.get(status) or (ServerError if status >= 500 else ContextArchError)
    return family(
        message,
        code=code,
        status=status,
        details=details if isinstance(details, dict) else {"details": details},
        retry_after=retry_after,
    )
