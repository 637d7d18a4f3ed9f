"""`GET /api/v1/context/stream?...`: the context as Server-Sent Events (`chunk` events, then `complete`).

The assembly runs before the response starts, so bad input is the usual JSON error with its status
(401, 400 with a code, 404 outside the workspace) and a stream that starts always completes. A
client that leaves while it runs stops it at its next stage (apps/core/client_gone.py).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.assembly.api import ContextApi
from apps.assembly.streaming import StreamEvent, context_events, context_params, request_from_query_string
from apps.core.client_gone import client_gone
from apps.workspaces.authentication import api_key_of, workspace_of

MEDIA_TYPE = "text/event-stream"


def sse_encode(event: StreamEvent) -> bytes:
    """`event: <type>\\ndata: <json on one line>\\n\\n` (json.dumps escapes newlines inside strings)."""
    return f"event: {event['type']}\ndata: {json.dumps(event['data'], ensure_ascii=False)}\n\n".encode()


async def _stream(events: list[StreamEvent]) -> AsyncIterator[bytes]:
    # An async iterator: daphne serves it without a thread hop (a sync one makes Django warn).
    for event in events:
        yield sse_encode(event)


def _describe(field: serializers.Field) -> str:
    many = isinstance(field, serializers.ListField)
    return "As in the body of POST /api/v1/context/" + ("; repeated or comma-separated." if many else ".")


class ContextStreamApi(APIView):
    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # EventSource sends `Accept: text/event-stream`; errors are still rendered as JSON.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[
            OpenApiParameter(name, OpenApiTypes.STR, description=_describe(field))
            for name, field in ContextApi.Input().fields.items()
        ],
        responses={(200, MEDIA_TYPE): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        params = context_params(request=request_from_query_string(request.query_params))
        events = context_events(
            workspace=workspace_of(request), params=params, api_key=api_key_of(request), cancelled=client_gone(request)
        )
        response = StreamingHttpResponse(_stream(events), content_type=MEDIA_TYPE)
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # proxies such as nginx must not hold the events back
        return response
