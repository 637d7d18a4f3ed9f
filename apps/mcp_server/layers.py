"""A layer named by id or by external id, as the API's list filter finds it in the key's workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult

from apps.mcp_server.internal_api import api_call
from apps.mcp_server.results import error_body, tool_error, tool_result


async def layer_id_for(
    *, origin: Mapping[str, Any], layer: int | None, layer_external_id: str | None, required: bool
) -> int | None | CallToolResult:
    """`layer`, or the id of the layer with `layer_external_id`; a tool error when neither resolves.

    The lookup is `GET /api/v1/layers/?external_id=`, so a layer of another workspace is as absent
    as one that does not exist (`layer_not_found`).
    """
    if layer is not None and layer_external_id is not None:
        return tool_error(error_body("invalid_layer", "give layer or layer_external_id, not both"))
    if layer is not None:
        return layer
    if layer_external_id is None:
        if required:
            return tool_error(error_body("missing_layer", "give layer or layer_external_id"))
        return None
    answer = await api_call(
        origin=origin, method="GET", path="/api/v1/layers/", query={"external_id": layer_external_id}
    )
    if not answer.ok:
        return tool_result(answer)
    rows = answer.body.get("results", []) if isinstance(answer.body, dict) else answer.body
    if not rows:
        return tool_error(error_body("layer_not_found", f"no layer with external_id {layer_external_id!r}"))
    return int(rows[0]["id"])
