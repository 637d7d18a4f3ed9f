"""The MCP request behind a tool call: its ASGI scope carries the API key every API call is made with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST


def origin_of(ctx: Context[Any, Any]) -> Mapping[str, Any]:
    """The ASGI scope of the HTTP request that carried this MCP message (authenticated at /mcp/)."""
    request = ctx.request_context.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, Mapping):
        raise MCPError(INVALID_REQUEST, "Context Architect's MCP server answers over HTTP at /mcp/ only")
    return scope
