"""Tool results: the API's answer as structured content, and its errors as tool errors with its code."""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from apps.mcp_server.internal_api import ApiAnswer


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The API's error envelope, `{"error": {"code", "message", "details"}}`."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def tool_error(body: dict[str, Any]) -> CallToolResult:
    """A tool error (`isError`): the model reads the envelope as text, a program reads `structuredContent`."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True
    )


def error_of(answer: ApiAnswer) -> dict[str, Any]:
    """The error envelope of a failed answer (the API's own, or one naming the status)."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and "code" in body["error"]:
        return body
    return error_body("api_error", f"the API answered {answer.status}", {"status": answer.status})


def tool_result(answer: ApiAnswer, *, text: str | None = None) -> CallToolResult:
    """The answer as a tool result: `text` (default: the JSON body) for the model, the body as structured content."""
    if not answer.ok:
        return tool_error(error_of(answer))
    body = answer.body if isinstance(answer.body, dict) else {"results": answer.body}
    shown = text if text is not None else json.dumps(body, default=str)
    return CallToolResult(content=[TextContent(type="text", text=shown)], structured_content=body)
