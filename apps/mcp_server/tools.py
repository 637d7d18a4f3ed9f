"""The MCP tools: each one API call (apps/mcp_server/internal_api.py), its answer or its error code returned.

Arguments carry JSON-schema descriptions for the model; `None` means "leave it to the API's
default" (one exception, said in its description: a memory stored by `remember` is a fact unless
told otherwise, as the API requires a memory type).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from apps.mcp_server.explain import trace_explain
from apps.mcp_server.internal_api import api_call
from apps.mcp_server.layers import layer_id_for
from apps.mcp_server.origin import origin_of
from apps.mcp_server.results import tool_result

Ctx = Context[Any, Any]
LayerId = Annotated[int | None, Field(description="Id of the layer (a session, project, ...) to work in")]
LayerExternalId = Annotated[
    str | None, Field(description="The layer's own external id (e.g. your session id), instead of `layer`")
]
Format = Literal["json", "markdown", "text"]
ItemKind = Literal["message", "memory", "package", "spec", "document"]
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def _given(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


async def get_context(
    ctx: Ctx,
    query: Annotated[str, Field(description="What the agent is about to do or was asked, in its own words")],
    layer: LayerId = None,
    layer_external_id: LayerExternalId = None,
    token_budget: Annotated[int | None, Field(description="Most tokens the context may take (exact)", ge=1)] = None,
    model: Annotated[str | None, Field(description="Model whose tokenizer counts the budget, e.g. gpt-4o")] = None,
    profile: Annotated[str | None, Field(description="Name of an agent profile (budget, format, ranking)")] = None,
    format: Annotated[Format | None, Field(description="How the context string is rendered")] = None,
    kinds: Annotated[list[ItemKind] | None, Field(description="Only these kinds of items")] = None,
    agent_type: Annotated[str | None, Field(description="The calling agent's type, e.g. coder")] = None,
    group_id: Annotated[str | None, Field(description="Task group the agent works on")] = None,
    conversation_id: Annotated[str | None, Field(description="Conversation whose recent turns to include")] = None,
    iteration: Annotated[int | None, Field(description="The agent's attempt at its task (1 first)", ge=1)] = None,
) -> CallToolResult:
    """Assemble the context for a query from the workspace's layers, within an exact token budget.

    Returns the context string to put in the prompt, then the answer's details as JSON (chunks with
    ids, total_tokens, warnings and the trace_id for `explain` and `report_consumption`).
    """
    body = _given(
        layer=layer,
        layer_external_id=layer_external_id,
        query=query,
        token_budget=token_budget,
        model=model,
        profile=profile,
        format=format,
        kinds=kinds,
        agent_type=agent_type,
        group_id=group_id,
        conversation_id=conversation_id,
        iteration=iteration,
    )
    answer = await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/context/", body=body)
    if not answer.ok:
        return tool_result(answer)
    details = {k: v for k, v in answer.body.items() if k != "context"}
    return tool_result(answer, text=f"{answer.body['context']}\n\n---\n{_json(details)}")


async def search_history(
    ctx: Ctx,
    query: Annotated[str | None, Field(description='Messages about this, by meaning, e.g. "authentication"')] = None,
    task: Annotated[str | None, Field(description="A task id: its messages and its community summary")] = None,
    ids: Annotated[list[int] | None, Field(description="Exact message ids to fetch")] = None,
    layer: LayerId = None,
    layer_external_id: LayerExternalId = None,
    limit: Annotated[int | None, Field(description="At most this many messages (default 50)", ge=1)] = None,
    format: Annotated[Format | None, Field(description="How the messages are rendered (default markdown)")] = None,
) -> CallToolResult:
    """Fetch past conversation messages in detail: by meaning (`query`), by `task` or by `ids`, oldest first.

    Use it when the context mentions something (a summary, a title) whose full text you need.
    """
    origin = origin_of(ctx)
    resolved = await layer_id_for(origin=origin, layer=layer, layer_external_id=layer_external_id, required=False)
    if isinstance(resolved, CallToolResult):
        return resolved
    query_params = _given(
        query=query, task=task, ids=",".join(map(str, ids)) if ids else None, layer=resolved, limit=limit, format=format
    )
    answer = await api_call(origin=origin, method="GET", path="/api/v1/history/", query=query_params)
    if answer.ok and isinstance(answer.body, dict) and isinstance(answer.body.get("context"), str):
        details = {k: v for k, v in answer.body.items() if k != "context"}
        return tool_result(answer, text=f"{answer.body['context']}\n\n---\n{_json(details)}")
    return tool_result(answer)


async def remember(
    ctx: Ctx,
    content: Annotated[str, Field(description="The text to keep")],
    layer: LayerId = None,
    layer_external_id: LayerExternalId = None,
    kind: Annotated[
        Literal["memory", "message"], Field(description="memory: a fact or decision; message: a conversation turn")
    ] = "memory",
    type: Annotated[
        Literal["entity", "fact", "decision"] | None, Field(description="For a memory: its type (default fact)")
    ] = None,
    title: Annotated[str | None, Field(description="A short title")] = None,
    role: Annotated[
        Literal["user", "assistant", "system", "tool"] | None, Field(description="For a message: who said it")
    ] = None,
    parent: Annotated[int | None, Field(description="For a message: id of the message it answers")] = None,
    task_ids: Annotated[list[str] | None, Field(description="Tasks the item belongs to")] = None,
    importance: Annotated[float | None, Field(description="0..1; 1 keeps it at full detail", ge=0, le=1)] = None,
    external_id: Annotated[str | None, Field(description="Your own id for the item (unique in the layer)")] = None,
) -> CallToolResult:
    """Store a memory (fact, decision, preference) or a conversation message in a layer."""
    origin = origin_of(ctx)
    resolved = await layer_id_for(origin=origin, layer=layer, layer_external_id=layer_external_id, required=True)
    if isinstance(resolved, CallToolResult):
        return resolved
    body = _given(
        layer=resolved,
        kind=kind,
        content=content,
        type=type or ("fact" if kind == "memory" else None),
        title=title,
        role=role,
        parent=parent,
        task_ids=task_ids,
        importance=importance,
        external_id=external_id,
    )
    return tool_result(await api_call(origin=origin, method="POST", path="/api/v1/items/", body=body))


async def record_attempt(
    ctx: Ctx,
    outcome: Annotated[Literal["failed", "succeeded"], Field(description="How the attempt ended")],
    layer: LayerId = None,
    layer_external_id: LayerExternalId = None,
    group_id: Annotated[str | None, Field(description="Task group the attempt belongs to")] = None,
    agent_type: Annotated[str | None, Field(description="The agent's type, e.g. coder")] = None,
    iteration: Annotated[int | None, Field(description="Which attempt this is (1 first)", ge=0)] = None,
    error: Annotated[str | None, Field(description="The error the attempt ran into (redacted before storage)")] = None,
    solution: Annotated[str | None, Field(description="What fixed it, on success (redacted before storage)")] = None,
) -> CallToolResult:
    """Report an attempt at a task; a success after a failure captures an error pattern for next time."""
    body = _given(
        layer=layer,
        layer_external_id=layer_external_id,
        outcome=outcome,
        group_id=group_id,
        agent_type=agent_type,
        iteration=iteration,
        error=error,
        solution=solution,
    )
    return tool_result(await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/attempts/", body=body))


async def match_error(
    ctx: Ctx,
    error: Annotated[str, Field(description="The error message or log excerpt")],
    min_confidence: Annotated[float | None, Field(description="Only patterns this sure (0..1)", ge=0, le=1)] = None,
    limit: Annotated[int | None, Field(description="At most this many patterns (default 10)", ge=1)] = None,
) -> CallToolResult:
    """Known fixes for an error: captured patterns, the exact signature first, then the most similar."""
    body = _given(error=error, min_confidence=min_confidence, limit=limit)
    answer = await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/error-patterns/match/", body=body)
    return tool_result(answer)


async def report_consumption(
    ctx: Ctx,
    trace_id: Annotated[str, Field(description="The trace_id of the get_context answer")],
    used: Annotated[list[int], Field(description="Ids of the injected package items you used (may be empty)")],
) -> CallToolResult:
    """Say which of the packages a context injected were actually used, so helpful ones rank higher."""
    body = {"trace_id": trace_id, "used": used}
    return tool_result(await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/consumption/", body=body))


async def explain(
    ctx: Ctx,
    trace_id: Annotated[str, Field(description="The trace_id of a get_context answer")],
    max_items: Annotated[int, Field(description="Most candidates listed per section", ge=1, le=100)] = 10,
) -> CallToolResult:
    """Why a context holds what it holds: the budget spent, what got in (best first) and why the rest did not."""
    answer = await api_call(origin=origin_of(ctx), method="GET", path=f"/api/v1/traces/{_segment(trace_id)}/")
    if not answer.ok:
        return tool_result(answer)
    return tool_result(answer, text=trace_explain(answer.body, max_items=max_items))


async def count_tokens(
    ctx: Ctx,
    model: Annotated[str | None, Field(description="The model whose tokenizer counts, e.g. claude-sonnet-4-5")] = None,
    text: Annotated[str | None, Field(description="A text to count (or give messages)")] = None,
    messages: Annotated[
        list[dict[str, Any]] | None,
        Field(description="Chat messages ({role, content}) to count with the model's overhead"),
    ] = None,
    tools: Annotated[list[dict[str, Any]] | None, Field(description="Tool definitions sent with the messages")] = None,
) -> CallToolResult:
    """How many tokens a text or a chat request takes in a model, before sending it: exact where the
    model's tokenizer is published, else a calibrated estimate with the margin to keep free."""
    body = _given(model=model, text=text, messages=messages, tools=tools)
    return tool_result(await api_call(origin=origin_of(ctx), method="POST", path="/api/v1/tokens/", body=body))


def _segment(value: str) -> str:
    """A path segment from an argument: a trace id with a slash or `..` in it names no trace."""
    return value if value and all(c.isalnum() or c == "-" for c in value) else "invalid"


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def tools_register(server: MCPServer[Any]) -> None:
    """Add the tools to `server`, each marked read-only or not."""
    for fn, hints in (
        (get_context, READ),  # it records the trace and access counts, but changes no content
        (search_history, READ),
        (remember, WRITE),
        (record_attempt, WRITE),
        (match_error, READ),
        (report_consumption, WRITE),
        (explain, READ),
        (count_tokens, READ),
    ):
        server.add_tool(fn, annotations=hints, structured_output=False)
