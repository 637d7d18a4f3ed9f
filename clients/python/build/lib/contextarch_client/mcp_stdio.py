"""`contextarch-mcp`: an MCP server on stdio for desktop agents, relaying to the service's `/mcp/` endpoint.

It holds no tool of its own: every list and call is forwarded over streamable HTTP with the key
from the environment, so a desktop agent sees exactly the tools, resources and prompt of the
service it points at, scoped to that key's workspace, and needs no database or Django here.

    CONTEXTARCH_URL=http://127.0.0.1:8000 CONTEXTARCH_API_KEY=ca_... contextarch-mcp
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    TextContent,
)

from contextarch_client.config import KEY_ENV, URL_ENV, USER_AGENT, Config
from contextarch_client.errors import ContextArchError

Ctx = ServerRequestContext[Any, Any]


def _unreachable(exc: BaseException) -> CallToolResult:
    body = {"error": {"code": "service_unreachable", "message": f"{type(exc).__name__}: {exc}", "details": {}}}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True
    )


def relay_server(remote: Client) -> Server[Any]:
    """A low-level server whose every handler asks `remote` (a connected client of the service)."""

    async def list_tools(ctx: Ctx, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=(await remote.list_tools()).tools)

    async def call_tool(ctx: Ctx, params: CallToolRequestParams) -> CallToolResult:
        try:
            result = await remote.call_tool(params.name, params.arguments or {})
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001  (the service went away mid-session: a tool error, not a crash)
            return _unreachable(exc)
        assert isinstance(result, CallToolResult)
        return CallToolResult(
            content=result.content, structured_content=result.structured_content, is_error=result.is_error
        )

    async def list_resources(ctx: Ctx, params: PaginatedRequestParams | None) -> ListResourcesResult:
        return ListResourcesResult(resources=(await remote.list_resources()).resources)

    async def list_resource_templates(ctx: Ctx, params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
        templates = (await remote.list_resource_templates()).resource_templates
        return ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(ctx: Ctx, params: ReadResourceRequestParams) -> ReadResourceResult:
        result = await remote.read_resource(str(params.uri))
        assert isinstance(result, ReadResourceResult)
        return ReadResourceResult(contents=result.contents)

    async def list_prompts(ctx: Ctx, params: PaginatedRequestParams | None) -> ListPromptsResult:
        return ListPromptsResult(prompts=(await remote.list_prompts()).prompts)

    async def get_prompt(ctx: Ctx, params: GetPromptRequestParams) -> GetPromptResult:
        result = await remote.get_prompt(params.name, params.arguments)
        assert isinstance(result, GetPromptResult)
        return GetPromptResult(description=result.description, messages=result.messages)

    return Server(
        "context-architect",
        title="Context Architect (stdio)",
        instructions=remote.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve(config: Config) -> None:
    """Connect to the service, then serve stdio until the agent closes it."""
    headers = {"Authorization": f"Bearer {config.api_key}", "User-Agent": USER_AGENT}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as http:
        async with Client(streamable_http_client(f"{config.base_url}/mcp/", http_client=http)) as remote:
            server = relay_server(remote)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())


def main() -> None:
    """Console entry point: configuration from CONTEXTARCH_URL and CONTEXTARCH_API_KEY."""
    try:
        config = Config.resolve(os.environ.get(URL_ENV), os.environ.get(KEY_ENV))
    except ContextArchError as exc:
        print(f"contextarch-mcp: {exc.message}", file=sys.stderr)
        raise SystemExit(2) from exc
    try:
        anyio.run(serve, config)
    except KeyboardInterrupt:
        pass
    except Exception as exc:
        print(f"contextarch-mcp: cannot serve {config.base_url}/mcp/: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc


if __name__ == "__main__":
    main()
