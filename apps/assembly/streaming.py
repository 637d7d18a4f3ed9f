"""Streaming context: a request (query string or WebSocket message) → the chunk and complete events.

Both streams validate with the same serializer as `POST /api/v1/context/` and call the same
`context_assemble`, so the chunk events are exactly the non-streaming response's chunks, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypedDict

from django.http import QueryDict
from rest_framework import serializers

from apps.assembly.api import ContextApi, params_from
from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.serializers import ContextOutput
from apps.assembly.services import context_assemble
from apps.workspaces.models import ApiKey, Workspace


class StreamEvent(TypedDict):
    """One event as both streams send it: SSE as `event: <type>`, WebSocket as `{"type", "data"}`."""

    type: Literal["chunk", "complete"]
    data: dict[str, Any]


def request_from_query_string(query: QueryDict) -> dict[str, Any]:
    """The JSON-body equivalent of a query string: list fields repeated or comma-separated
    (`kinds=memory,spec` or `kinds=memory&kinds=spec`), other fields the last value given;
    empty values count as absent; unknown names are kept, so the serializer refuses them as it
    refuses unknown body keys (400 `unknown_fields`)."""
    fields = ContextApi.Input().fields
    request: dict[str, Any] = {name: query.get(name, "") for name in query if name not in fields}
    for name, field in fields.items():
        if isinstance(field, serializers.ListField):
            parts = [part.strip() for value in query.getlist(name) for part in value.split(",")]
            if parts := [part for part in parts if part]:
                request[name] = parts
        elif value := query.get(name, ""):
            request[name] = value
    return request


def context_params(*, request: Mapping[str, Any]) -> ContextParams:
    """Validate `request` exactly as POST /api/v1/context/ does (raises DRF's ValidationError)."""
    data = ContextApi.Input(data=dict(request))
    data.is_valid(raise_exception=True)
    return params_from(data.validated_data)


def context_events(
    *,
    workspace: Workspace,
    params: ContextParams,
    api_key: ApiKey | None = None,
    cancelled: Callable[[], bool] | None = None,
    origin: str = RecordOrigin.AGENT,
) -> list[StreamEvent]:
    """Assemble once, then one `chunk` event per chunk and a `complete` event with the totals and
    the rest of the response (context, trace_id, warnings, overflow, ...). Raises DomainError on
    bad input before any event exists, so a stream never starts for a request that fails, and
    AssemblyCancelled once `cancelled()` is true (see `context_assemble`)."""
    assembled = context_assemble(
        workspace=workspace, params=params, api_key=api_key, cancelled=cancelled, origin=origin
    )
    result = ContextOutput(assembled).data
    chunks = result["chunks"]
    events: list[StreamEvent] = [{"type": "chunk", "data": chunk} for chunk in chunks]
    summary = {key: value for key, value in result.items() if key != "chunks"}
    events.append({"type": "complete", "data": {"total_chunks": len(chunks), **summary}})
    return events
