"""The history tool's API: `GET /api/v1/history/` (the tool itself: history.py)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.assembly.history import MAX_IDS, MAX_LIMIT, HistoryQuery, history_query
from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_IDS, INVALID_LIMIT, INVALID_QUERY
from apps.engine.format import FORMATS
from apps.layers import selectors as layer_selectors
from apps.layers.api import parse_int
from apps.workspaces.authentication import workspace_of


def _ids(raw: str | None) -> tuple[int, ...]:
    if not raw:
        return ()
    try:
        ids = tuple(dict.fromkeys(int(part) for part in raw.split(",") if part.strip()))
    except ValueError as exc:
        raise InvalidInput("ids must be comma-separated integers", code=INVALID_IDS) from exc
    if len(ids) > MAX_IDS:
        raise InvalidInput(f"at most {MAX_IDS} ids", code=INVALID_IDS)
    return ids


class HistoryApi(APIView):
    """The history tool for LLMs: messages by meaning (`query`), by `task` or by `ids`."""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `format` names the context's format (as in POST /context/), not DRF's renderer: always JSON.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        parameters=[
            OpenApiParameter("layer", int, description="a layer; its descendants are searched too (default: all)"),
            OpenApiParameter("query", str, description='e.g. "authentication": messages about it'),
            OpenApiParameter("task", str, description="a task id: its messages and its community summary"),
            OpenApiParameter("ids", str, description="comma-separated message ids"),
            OpenApiParameter("format", str, enum=list(FORMATS), description="markdown (default), json or text"),
            OpenApiParameter("limit", int, description=f"at most this many messages (1..{MAX_LIMIT}, default 50)"),
            OpenApiParameter("model", str, description="whose tokenizer counts total_tokens"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        workspace = workspace_of(request)
        params = request.query_params
        layer_id = parse_int(params.get("layer"), name="layer")
        layer = layer_selectors.layer_get(workspace=workspace, layer_id=layer_id) if layer_id is not None else None
        limit = parse_int(params.get("limit"), name="limit")
        limit = 50 if limit is None else limit
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be 1..{MAX_LIMIT}", code=INVALID_LIMIT)
        query = params.get("query", "")
        if len(query) > 2000:
            raise InvalidInput("query is limited to 2000 characters", code=INVALID_QUERY)
        q = HistoryQuery(
            layer=layer,
            query=query,
            task=params.get("task", "")[:200],
            ids=_ids(params.get("ids")),
            limit=limit,
            format=params.get("format") or "markdown",
            model=params.get("model") or None,
        )
        return Response(history_query(workspace=workspace, q=q))
