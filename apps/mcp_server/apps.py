from __future__ import annotations

from django.apps import AppConfig


class McpServerConfig(AppConfig):
    """The MCP server: the agent API as Model Context Protocol tools, resources and a prompt."""

    name = "apps.mcp_server"
    label = "mcp_server"
