"""`GET /preview/stream/?...`: the preview's streaming mode, the SSE of `GET /api/v1/context/stream`
for a signed-in member instead of an API key.

Same query string, same validation (the API's serializer), same events (`chunk` per chunk, then
`complete`), built by `apps.assembly.streaming`, after one `progress` event sent at once. Bad
input (a field's value, or a name the API does not know) answers 400 with the API's error body
before any event, so the page can show the message.

Cancel is real: the assembly runs inside the response's (async) body, so when the client goes
away (the page's Cancel aborts the fetch) Django cancels the body, which sets the assembly's
cancel flag; the assembly stops at its next stage boundary and records and caches nothing
(apps/assembly/deadline.py). Errors the assembly finds after the response started (a layer
outside the workspace, an unknown template) arrive as one `error` event with the API's body and
the status the API would have answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET
from rest_framework.exceptions import ValidationError

from apps.assembly.api_stream import MEDIA_TYPE, sse_encode
from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.streaming import context_events, context_params, request_from_query_string
from apps.core.errors import DomainError
from apps.core.exceptions import error_body, validation_error_body
from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Workspace

log = logging.getLogger(__name__)


PROGRESS = b'event: progress\ndata: {"state": "assembling"}\n\n'


def error_event(exc: DomainError) -> bytes:
    """`event: error` with the API's error body and the status it would have answered."""
    body = {**error_body(exc.code, exc.message, exc.details), "status": exc.status}
    return f"event: error\ndata: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


async def _stream(*, workspace: Workspace, params: ContextParams) -> AsyncIterator[bytes]:
    cancel = threading.Event()
    yield PROGRESS  # starts the response at once (some servers send the head with the first bytes)
    try:
        # The request's own thread (thread-sensitive), as any sync view's database work.
        events = await sync_to_async(context_events)(
            workspace=workspace, params=params, cancelled=cancel.is_set, origin=RecordOrigin.PAGE
        )
    except asyncio.CancelledError:  # the client disconnected: stop the assembly at its next stage boundary
        cancel.set()
        log.info("preview stream of workspace %s: the client left, the assembly stops at its next stage", workspace.pk)
        raise
    except AssemblyCancelled:
        return
    except DomainError as exc:
        yield error_event(exc)
        return
    for event in events:
        yield sse_encode(event)


@require_GET
@workspace_view()
def preview_stream(request: HttpRequest, access: WorkspaceAccess) -> HttpResponseBase:
    assert access.current is not None
    try:
        params = context_params(request=request_from_query_string(request.GET))
    except ValidationError as exc:  # the API's codes and messages (apps/core/exceptions.py)
        return JsonResponse(validation_error_body(exc.detail), status=400)
    except DomainError as exc:  # e.g. unknown_fields, raised by the strict serializer itself
        return JsonResponse(error_body(exc.code, exc.message, exc.details), status=exc.status)
    response = StreamingHttpResponse(_stream(workspace=access.current, params=params), content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
