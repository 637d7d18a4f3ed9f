"""The MCP server: tools, resources and prompt on the official SDK's `MCPServer`."""

from __future__ import annotations

from functools import cache
from typing import Any

from mcp.server.mcpserver import MCPServer

from apps.mcp_server.resources import resources_register
from apps.mcp_server.tool_errors import sdk_errors_as_codes
from apps.mcp_server.tools import tools_register

INSTRUCTIONS = """Context Architect keeps your workspace's knowledge in layers (company → ... → session).
Call get_context with your task before you act; put its context in your prompt. Store what should
last with remember. On an error, call match_error for known fixes, and report each attempt with
record_attempt. After a context with packages, report_consumption says which you used. explain
tells why a context holds what it holds; search_history fetches past messages in full."""


@cache
def mcp_server() -> MCPServer[Any]:
    """The one server of this process (the HTTP endpoint at /mcp/ drives it)."""
    server: MCPServer[Any] = MCPServer(
        "context-architect", title="Context Architect", instructions=INSTRUCTIONS, version="1"
    )
    tools_register(server)
    resources_register(server)
    server.middleware.append(sdk_errors_as_codes)
    return server
