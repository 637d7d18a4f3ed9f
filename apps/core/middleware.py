"""Request middleware of the service (apps/core): the strict-input check of paths and query strings."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from apps.core.exceptions import error_body
from apps.core.strict_json import InvalidCharacters, bad_character


def _refusal(request: HttpRequest) -> InvalidCharacters | None:
    """What is wrong with the request's path or query string (the body is the parser's), or None."""
    reason = bad_character(request.path)
    if reason:
        return InvalidCharacters(f"the path contains {reason}", details={"where": "path"})
    for name, values in request.GET.lists():
        for text in (name, *values):
            reason = bad_character(text)
            if reason:
                return InvalidCharacters(
                    f"the query parameter {name[:50]!r} contains {reason}",
                    details={"where": "query", "parameter": name},
                )
    return None


class StrictInputMiddleware:
    """NUL and lone surrogates in a path or a query parameter are a 400 `invalid_characters`.

    They cannot reach PostgreSQL (it refuses NUL in text), so every filter and path name is safe
    without each view checking; bodies are checked by apps/core/parsers.StrictJSONParser.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = _refusal(request)
        if refusal is None:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse(error_body(refusal.code, refusal.message, refusal.details), status=400)
        return HttpResponseBadRequest(refusal.message)
