"""Domain exceptions with stable codes; apps/core/exceptions.py maps them to HTTP responses once."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error a client may branch on. `code` is stable; `message` is for humans."""

    code = "error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details or {}


class InvalidInput(DomainError):
    code = "invalid_input"
    status = 400


class NotFound(DomainError):
    """Anything missing *or outside the caller's workspace*: the two are indistinguishable on purpose."""

    code = "not_found"
    status = 404


class Forbidden(DomainError):
    """Authenticated, but the credential may not do this (e.g. an API key without the needed scope)."""

    code = "forbidden"
    status = 403


class TooManyRequests(DomainError):
    """A rate limit was reached; `retry_after` (whole seconds) goes out as the `Retry-After` header."""

    code = "rate_limited"
    status = 429

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code, details={"retry_after": retry_after})
        self.retry_after = retry_after


class Conflict(DomainError):
    code = "conflict"
    status = 409


class TooLarge(DomainError):
    """A request over one of the size limits (body, one item's content, a request's total content)."""

    code = "content_too_large"
    status = 413


class ServiceUnavailable(DomainError):
    code = "service_unavailable"
    status = 503
