"""`GET /preview/stream/?...`: the preview's streaming mode, the SSE of `GET /api/v1/context/stream`
for a signed-in member instead of an API key.

Same query string, same validation (the API's serializer), same events (`chunk` per chunk, then
`complete`), built by `apps.assembly.streaming`. Bad input answers 400 with the API's error body
before any event, so the page can show the message; the assembly's own deadline applies.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET
from rest_framework.exceptions import ValidationError

from apps.assembly.api_stream import MEDIA_TYPE, sse_encode
from apps.assembly.streaming import StreamEvent, context_events, context_params, request_from_query_string
from apps.core.errors import DomainError
from apps.core.exceptions import error_body, validation_error_body
from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess


async def _stream(events: list[StreamEvent]) -> AsyncIterator[bytes]:
    for event in events:
        yield sse_encode(event)


@require_GET
@workspace_view()
def preview_stream(request: HttpRequest, access: WorkspaceAccess) -> HttpResponseBase:
    assert access.current is not None
    try:
        params = context_params(request=request_from_query_string(request.GET))
        events = context_events(workspace=access.current, params=params)
    except ValidationError as exc:  # the API's codes and messages (apps/core/exceptions.py)
        return JsonResponse(validation_error_body(exc.detail), status=400)
    except DomainError as exc:
        return JsonResponse(error_body(exc.code, exc.message, exc.details), status=exc.status)
    response = StreamingHttpResponse(_stream(events), content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
