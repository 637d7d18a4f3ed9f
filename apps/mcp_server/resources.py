"""MCP resources (a layer's summaries per depth, a session's recent messages) and the chat-turn prompt."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from apps.mcp_server.internal_api import ApiAnswer, api_call
from apps.mcp_server.origin import origin_of
from apps.mcp_server.results import error_of

Ctx = Context[Any, Any]
DEPTHS = ("sentence", "paragraph", "detailed")
MAX_MESSAGES = 200


def _raise_for(answer: ApiAnswer) -> None:
    """An API error as an MCP error whose `data` is the API's envelope (its `code` included)."""
    if answer.ok:
        return
    body = error_of(answer)
    raise MCPError(INVALID_PARAMS if answer.status < 500 else INTERNAL_ERROR, body["error"]["message"], body)


def _invalid(code: str, message: str) -> MCPError:
    return MCPError(INVALID_PARAMS, message, {"error": {"code": code, "message": message, "details": {}}})


def _layer_id(value: str) -> int:
    if not value.isdigit():
        raise _invalid("invalid_layer", f"layer id must be a number, not {value!r}")
    return int(value)


async def layer_summary(layer_id: str, depth: str, ctx: Ctx) -> str:
    """The layer's generic summary at one depth: sentence (≤ 50 tokens), paragraph (≤ 200) or detailed (≤ 500)."""
    if depth not in DEPTHS:
        raise _invalid("invalid_depth", f"depth is one of {', '.join(DEPTHS)}, not {depth!r}")
    path = f"/api/v1/layers/{_layer_id(layer_id)}/summaries/"
    answer = await api_call(origin=origin_of(ctx), method="GET", path=path)
    _raise_for(answer)
    for row in answer.body["summaries"]:
        if row["depth"] == depth and not row.get("personalized"):
            stale = " (stale: the last regeneration failed)" if row.get("stale") else ""
            return str(row["text"]) + stale
    return f"Layer {layer_id} has no {depth} summary yet (summaries are made in the background)."


async def session_messages(layer_id: str, ctx: Ctx, limit: str = "20") -> str:
    """A session's most recent messages (default 20, at most 200), oldest first, as JSON."""
    if not limit.isdigit() or not 1 <= int(limit) <= MAX_MESSAGES:
        raise _invalid("invalid_limit", f"limit must be 1..{MAX_MESSAGES}")
    origin, size, path = origin_of(ctx), int(limit), "/api/v1/items/"
    query: dict[str, Any] = {"layer": _layer_id(layer_id), "kind": "message", "page_size": size}
    first = await api_call(origin=origin, method="GET", path=path, query=query)
    _raise_for(first)
    count = int(first.body["count"])
    rows = list(first.body["results"])
    last_page = max(1, -(-count // size))
    if last_page > 1:  # items are listed oldest first: the newest are on the last page(s)
        last = await api_call(origin=origin, method="GET", path=path, query={**query, "page": last_page})
        _raise_for(last)
        before = await api_call(origin=origin, method="GET", path=path, query={**query, "page": last_page - 1})
        _raise_for(before)
        rows = [*before.body["results"], *last.body["results"]][-size:]
    keep = ("id", "role", "content", "created_at", "parent", "task_ids", "importance", "external_id")
    return json.dumps({"layer": int(layer_id), "count": count, "messages": [{k: r.get(k) for k in keep} for r in rows]})


async def chat_turn(
    message: str,
    ctx: Ctx,
    layer: str = "",
    layer_external_id: str = "",
    token_budget: str = "",
) -> str:
    """A chat turn with its context: the user's message after what Context Architect assembled for it."""
    body: dict[str, Any] = {"query": message}
    if layer:
        body["layer"] = _layer_id(layer)
    if layer_external_id:
        body["layer_external_id"] = layer_external_id
    if token_budget:
        if not token_budget.isdigit():
            raise _invalid("invalid_token_budget", "token_budget must be a number")
        body["token_budget"] = int(token_budget)
    answer = await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/context/", body=body)
    _raise_for(answer)
    return (
        "Context from Context Architect (trace "
        f"{answer.body['trace_id']}, {answer.body['total_tokens']} tokens):\n\n"
        f"<context>\n{answer.body['context']}\n</context>\n\n{message}"
    )


def resources_register(server: MCPServer[Any]) -> None:
    """Add the resource templates and the prompt to `server`."""
    server.resource("contextarch://layers/{layer_id}/summary/{depth}", name="layer_summary", mime_type="text/plain")(
        layer_summary
    )
    server.resource(
        "contextarch://layers/{layer_id}/messages{?limit}", name="session_messages", mime_type="application/json"
    )(session_messages)
    server.prompt(name="chat_turn", title="Chat turn with context")(chat_turn)
