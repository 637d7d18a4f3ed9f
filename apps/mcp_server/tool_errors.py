"""Errors the SDK raises before a tool runs (bad arguments, unknown tool) get a code like the API's."""

from __future__ import annotations

import re
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from apps.mcp_server.results import error_body, tool_error


def sdk_error_code(text: str) -> str:
    """`invalid_arguments` for arguments that fail the tool's JSON schema, `unknown_tool`, else `tool_failed`."""
    if "validation error" in text:
        return "invalid_arguments"
    if text.startswith("Unknown tool"):
        return "unknown_tool"
    return "tool_failed"


async def sdk_errors_as_codes(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: a tool error without the API's envelope gets one, so every tool error has a `code`.

    Results reach middleware already in wire form (a dict with camelCase keys).
    """
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
        return result
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and "error" in structured:
        return result
    text = " ".join(str(block.get("text", "")) for block in result.get("content", [])).strip()
    fields = sorted(set(re.findall(r"^(\w+)\n  ", text, flags=re.MULTILINE)))
    error = tool_error(error_body(sdk_error_code(text), text, {"fields": fields} if fields else None))
    return {**result, **error.model_dump(by_alias=True, exclude_none=True, mode="json")}
