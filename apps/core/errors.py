"""Domain exceptions with stable codes, and core's part of the error catalogue (apps/core/error_catalogue.py).

apps/core/exceptions.py maps the exceptions to HTTP responses once. A raise names its code from a
catalogue (`code=errors.LAYER_NOT_FOUND`); the exception's class says the status, which the catalogue
entry repeats (tests/core/test_error_catalogue.py holds the two together).
"""

from __future__ import annotations

from typing import Any

from apps.core.error_catalogue import CATALOGUE, ErrorCode, common_codes, error_code

# The exceptions' own codes, raised when a raise names none.
ERROR = error_code("error", 400, "The request failed.")
INVALID_INPUT = error_code("invalid_input", 400, "Invalid input.")
NOT_FOUND = error_code("not_found", 404, "Not found.")
FORBIDDEN = error_code("forbidden", 403, "Not allowed.")
RATE_LIMITED = error_code("rate_limited", 429, "Rate limited; retry after Retry-After seconds.")
CONFLICT = error_code("conflict", 409, "Conflicts with the current state.")
CONTENT_TOO_LARGE = error_code("content_too_large", 413, "The content is over a limit.")
SERVICE_UNAVAILABLE = error_code("service_unavailable", 503, "A service the answer needs is unavailable.")

# Refusals of the request itself: its body, its credentials, its method, its rate.
UNKNOWN_FIELDS = error_code("unknown_fields", 400, "The body has fields the operation does not take.")
MALFORMED_JSON = error_code("malformed_json", 400, "The body is not valid JSON.")
JSON_TOO_DEEP = error_code("json_too_deep", 400, "The JSON is nested too deep.")
INVALID_NUMBER = error_code("invalid_number", 400, "A number is not finite (NaN or Infinity).")
INVALID_CHARACTERS = error_code("invalid_characters", 400, "A string holds NUL or a lone surrogate.")
UNSUPPORTED_MEDIA_TYPE = error_code("unsupported_media_type", 415, "The body is not application/json.")
REQUEST_TOO_LARGE = error_code("request_too_large", 413, "The request body is over the size limit.")
NOT_AUTHENTICATED = error_code("not_authenticated", 401, "Authentication credentials were not provided.")
INVALID_API_KEY = error_code("invalid_api_key", 401, "Invalid or revoked API key.")
PERMISSION_DENIED = error_code("permission_denied", 403, "Not allowed.")
METHOD_NOT_ALLOWED = error_code("method_not_allowed", 405, "Method not allowed.")
THROTTLED = error_code("throttled", 429, "Rate limited; retry after Retry-After seconds.")
OVERLOADED = error_code(
    "overloaded", 429, "This workspace runs its share of the worker, or no connection is free; retry.", also=(503,)
)
SERVER_ERROR = error_code("server_error", 500, "Internal error; it has been logged.")
DATABASE_TIMEOUT = error_code("database_timeout", 503, "The database did not answer in time; retry.")
DATABASE_UNAVAILABLE = error_code("database_unavailable", 503, "The database is unavailable; retry shortly.")

# The embedding provider and a query vector given in a request.
EMBEDDING_UNAVAILABLE = error_code("embedding_unavailable", 503, "The embedding provider is unavailable.")
EMBEDDING_DIMENSION_MISMATCH = error_code(
    "embedding_dimension_mismatch", 503, "The embedding provider's vectors are not the store's size."
)
INVALID_QUERY_VECTOR = error_code("invalid_query_vector", 400, "query_vector must be finite and non-zero.")
INVALID_QUERY_VECTOR_DIMENSIONS = error_code(
    "invalid_query_vector_dimensions", 400, "query_vector has the wrong number of dimensions."
)

# Workspace archives (apps/core/archive): 400 for the archive, 409 for the workspace.
ARCHIVE_DAMAGED = error_code("archive_damaged", 400, "The archive is not a readable, intact zip.")
ARCHIVE_FORMAT_UNKNOWN = error_code("archive_format_unknown", 400, "Not a workspace archive of a known format.")
ARCHIVE_MEMBER_MISSING = error_code("archive_member_missing", 400, "A member the archive needs is missing.")
ARCHIVE_INVALID = error_code("archive_invalid", 400, "A row of the archive cannot be restored.")
WORKSPACE_NOT_EMPTY = error_code("workspace_not_empty", 409, "An archive is restored only into an empty workspace.")


# Input refusals shared by several apps.
INVALID_FIELDS = error_code("invalid_fields", 400, "These fields cannot be changed here.")
MISSING_LAYER = error_code("missing_layer", 400, "Give `layer` or `layer_external_id`.")

# What any API operation can answer: bad input in general, the credentials, anything outside the
# workspace, rate limits and an unavailable database; and a body's refusals for those that take one.
common_codes(
    INVALID_INPUT,
    INVALID_CHARACTERS,
    NOT_AUTHENTICATED,
    INVALID_API_KEY,
    PERMISSION_DENIED,
    NOT_FOUND,
    THROTTLED,
    RATE_LIMITED,
    OVERLOADED,
    DATABASE_TIMEOUT,
    DATABASE_UNAVAILABLE,
)
common_codes(
    UNKNOWN_FIELDS,
    MALFORMED_JSON,
    JSON_TOO_DEEP,
    INVALID_NUMBER,
    UNSUPPORTED_MEDIA_TYPE,
    REQUEST_TOO_LARGE,
    methods=("POST", "PUT", "PATCH"),
)


class DomainError(Exception):
    """Base of every error a client may branch on. `code` is stable; `message` is for humans (the
    catalogue entry's default when none is given)."""

    code = ERROR.code
    status = 400

    def __init__(
        self, message: str | None = None, *, code: ErrorCode | None = None, details: dict[str, Any] | None = None
    ) -> None:
        if message is None:
            message = (code or CATALOGUE[self.code]).message
        super().__init__(message)
        self.message = message
        if code:
            self.code = code.code
        self.details = details or {}


class InvalidInput(DomainError):
    code = INVALID_INPUT.code
    status = 400


class NotFound(DomainError):
    """Anything missing *or outside the caller's workspace*: the two are indistinguishable on purpose."""

    code = NOT_FOUND.code
    status = 404


class Forbidden(DomainError):
    """Authenticated, but the credential may not do this (e.g. an API key without the needed scope)."""

    code = FORBIDDEN.code
    status = 403


class TooManyRequests(DomainError):
    """A rate limit was reached; `retry_after` (whole seconds) goes out as the `Retry-After` header."""

    code = RATE_LIMITED.code
    status = 429

    def __init__(self, message: str, *, retry_after: int, code: ErrorCode | None = None) -> None:
        super().__init__(message, code=code, details={"retry_after": retry_after})
        self.retry_after = retry_after


class Conflict(DomainError):
    code = CONFLICT.code
    status = 409


class TooLarge(DomainError):
    """A request over one of the size limits (body, one item's content, a request's total content)."""

    code = CONTENT_TOO_LARGE.code
    status = 413


class ServiceUnavailable(DomainError):
    code = SERVICE_UNAVAILABLE.code
    status = 503
