"""The MCP server, driven by the official SDK's client against a live server: every tool, resource and prompt."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from mcp import Client
from mcp.types import CallToolResult

from apps.layers.models import Item
from apps.workspaces.services import api_key_create
from tests.mcp_server.served import McpConnect, Served

pytestmark = pytest.mark.server
T = TypeVar("T")
TOOLS = {
    "get_context",
    "search_history",
    "remember",
    "record_attempt",
    "match_error",
    "report_consumption",
    "explain",
    "count_tokens",
}


def run(connect: McpConnect, key: str, work: Callable[[Client], Awaitable[T]]) -> T:
    async def session() -> T:
        async with connect(key) as client:
            return await work(client)

    return asyncio.run(session())


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_code(result: CallToolResult) -> str:
    assert result.is_error, result.content
    envelope = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert envelope == result.structured_content
    return str(envelope["error"]["code"])


def test_it_lists_the_tools_with_described_arguments_the_resources_and_the_prompt(
    served: Served, connect: McpConnect
) -> None:
    async def work(client: Client) -> tuple[Any, Any, Any]:
        return await client.list_tools(), await client.list_resource_templates(), await client.list_prompts()

    tools, templates, prompts = run(connect, served.a.secret, work)

    assert {t.name for t in tools.tools} == TOOLS
    for tool in tools.tools:
        assert tool.description, tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (tool.name, name)
    get_context = next(t for t in tools.tools if t.name == "get_context")
    assert get_context.input_schema["required"] == ["query"]
    assert {t.uri_template for t in templates.resource_templates} == {
        "contextarch://layers/{layer_id}/summary/{depth}",
        "contextarch://layers/{layer_id}/messages{?limit}",
    }
    assert [p.name for p in prompts.prompts] == ["chat_turn"]


def test_it_assembles_context_and_explains_it_and_takes_the_consumption_report(
    served: Served, connect: McpConnect
) -> None:
    async def work(client: Client) -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        context = await client.call_tool(
            "get_context",
            {"layer_external_id": "sess-a", "query": "How long are database backups kept?", "token_budget": 120},
        )
        trace_id = ok(context)["trace_id"]
        explained = await client.call_tool("explain", {"trace_id": trace_id})
        consumed = await client.call_tool("report_consumption", {"trace_id": trace_id, "used": []})
        return context, explained, consumed

    context, explained, consumed = run(connect, served.a.secret, work)

    answer = ok(context)
    assert answer["chunks"][0]["external_id"] == "backups"
    assert answer["total_tokens"] <= 120
    assert context.content[0].text.startswith(answer["context"])  # type: ignore[union-attr]
    text = explained.content[0].text  # type: ignore[union-attr]
    assert f"Trace {answer['trace_id']}" in text and "of 120 tokens" in text and "backups" in text
    assert "item found by " in text  # each candidate's origin (vector, keyword, both, ...)
    assert ok(consumed)["trace_id"] == answer["trace_id"]


def test_it_searches_history_and_remembers_memories_and_messages(served: Served, connect: McpConnect) -> None:
    async def work(client: Client) -> tuple[CallToolResult, ...]:
        by_task = await client.call_tool("search_history", {"task": "auth", "format": "json"})
        memory = await client.call_tool(
            "remember", {"layer_external_id": "sess-a", "content": "Staging is rebuilt every night."}
        )
        message = await client.call_tool(
            "remember",
            {"layer": served.session.pk, "kind": "message", "role": "user", "content": "Ship it on Tuesday."},
        )
        return by_task, memory, message

    by_task, memory, message = run(connect, served.a.secret, work)

    assert "load the session first" in by_task.content[0].text  # type: ignore[union-attr]
    assert ok(by_task)["messages"]
    stored = Item.objects.get(pk=ok(memory)["id"])
    assert (stored.layer_id, stored.kind, stored.type) == (served.session.pk, "memory", "fact")
    assert Item.objects.get(pk=ok(message)["id"]).role == "user"


def test_it_records_attempts_and_matches_the_captured_error_pattern(served: Served, connect: McpConnect) -> None:
    error = "psycopg.OperationalError: connection to server at 10.0.0.7 port 5432 failed: too many clients"
    attempt = {"layer_external_id": "sess-a", "group_id": "g1", "agent_type": "coder"}

    async def work(client: Client) -> tuple[CallToolResult, ...]:
        failed = await client.call_tool(
            "record_attempt", {**attempt, "iteration": 1, "outcome": "failed", "error": error}
        )
        fixed = await client.call_tool(
            "record_attempt",
            {**attempt, "iteration": 2, "outcome": "succeeded", "solution": "Put pgbouncer in front of the database."},
        )
        matched = await client.call_tool("match_error", {"error": error})
        return failed, fixed, matched

    failed, fixed, matched = run(connect, served.a.secret, work)

    assert ok(failed)["outcome"] == "failed"
    assert ok(fixed)["captured"] is not None
    matches = ok(matched)["matches"]
    assert matches and matches[0]["solution"] == "Put pgbouncer in front of the database."


def test_it_reads_summaries_and_recent_messages_and_renders_the_chat_turn_prompt(
    served: Served, connect: McpConnect
) -> None:
    session = served.session.pk

    async def work(client: Client) -> tuple[Any, ...]:
        sentence = await client.read_resource(f"contextarch://layers/{session}/summary/sentence")
        detailed = await client.read_resource(f"contextarch://layers/{session}/summary/detailed")
        recent = await client.read_resource(f"contextarch://layers/{session}/messages?limit=2")
        prompt = await client.get_prompt(
            "chat_turn", {"message": "When are backups taken?", "layer": str(served.a.root.pk)}
        )
        return sentence, detailed, recent, prompt

    sentence, detailed, recent, prompt = run(connect, served.a.secret, work)

    assert sentence.contents[0].text and len(detailed.contents[0].text) >= len(sentence.contents[0].text)
    messages = json.loads(recent.contents[0].text)
    assert messages["count"] == 3
    assert [m["content"] for m in messages["messages"]] == [m[1] for m in served_messages()[1:]]
    text = prompt.messages[0].content.text
    assert "02:00 UTC" in text and text.endswith("When are backups taken?")


def served_messages() -> list[tuple[str, str, list[str]]]:
    from tests.mcp_server.served import MESSAGES

    return MESSAGES


def test_a_key_of_another_workspace_reaches_none_of_its_layers_traces_or_items(
    served: Served, connect: McpConnect
) -> None:
    trace_id = run(
        connect,
        served.a.secret,
        lambda c: c.call_tool("get_context", {"layer": served.session.pk, "query": "backups"}),
    ).structured_content["trace_id"]  # type: ignore[index]

    async def work(client: Client) -> list[Any]:
        results: list[Any] = [
            await client.call_tool("get_context", {"layer": served.session.pk, "query": "backups"}),
            await client.call_tool("get_context", {"layer_external_id": "sess-a", "query": "backups"}),
            await client.call_tool("remember", {"layer": served.session.pk, "content": "planted"}),
            await client.call_tool("search_history", {"layer": served.session.pk, "query": "login"}),
            await client.call_tool("explain", {"trace_id": trace_id}),
        ]
        for uri in (
            f"contextarch://layers/{served.session.pk}/summary/sentence",
            f"contextarch://layers/{served.session.pk}/messages",
        ):
            try:
                await client.read_resource(uri)
            except Exception as exc:  # noqa: BLE001  (the SDK raises MCPError)
                results.append(exc)
        return results

    *tools, summary, messages = run(connect, served.b.secret, work)

    assert [error_code(r) for r in tools] == ["layer_not_found"] * 4 + ["trace_not_found"]
    for refused in (summary, messages):
        assert refused.error.data["error"]["code"] == "layer_not_found", refused
    assert not Item.objects.filter(content="planted").exists()


def test_bad_arguments_are_tool_errors_with_a_code_and_the_server_keeps_answering(
    served: Served, connect: McpConnect
) -> None:
    async def work(client: Client) -> tuple[list[CallToolResult], CallToolResult]:
        bad = [
            await client.call_tool("get_context", {"query": "x", "token_budget": 0, "layer": served.a.root.pk}),
            await client.call_tool("get_context", {"query": "x"}),
            await client.call_tool("get_context", {"query": "x", "layer": "not a number"}),
            await client.call_tool("report_consumption", {"trace_id": "nope", "used": []}),
            await client.call_tool("explain", {"trace_id": "../../keys"}),
            await client.call_tool("record_attempt", {"layer": served.session.pk, "outcome": "maybe"}),
            await client.call_tool("remember", {"content": "no layer"}),
            await client.call_tool("no_such_tool", {}),
        ]
        return bad, await client.call_tool("get_context", {"query": "backups", "layer": served.a.root.pk})

    bad, after = run(connect, served.a.secret, work)

    assert [error_code(r) for r in bad] == [
        "invalid_arguments",
        "missing_layer",
        "invalid_arguments",
        "invalid_trace_id",
        "trace_not_found",
        "invalid_arguments",
        "missing_layer",
        "unknown_tool",
    ]
    assert ok(after)["chunks"]


def test_the_endpoint_refuses_a_request_without_a_valid_key_with_the_apis_codes(served: Served) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    answers = [
        http_post(f"{served.base}/mcp/", initialize, headers={}),
        http_post(f"{served.base}/mcp/", initialize, headers={"Authorization": "Bearer ca_not_a_key"}),
        http_post(f"{served.base}/mcp/", initialize, headers={"Authorization": "Basic abc def"}),
        http_post(f"{served.base}/mcp/elsewhere", initialize, headers={"Authorization": f"Bearer {served.a.secret}"}),
    ]
    assert [(status, body["error"]["code"]) for status, body, _ in answers] == [
        (401, "not_authenticated"),
        (401, "invalid_api_key"),
        (401, "invalid_api_key"),
        (404, "not_found"),
    ]
    assert answers[0][2]["WWW-Authenticate"] == "Bearer"


def http_post(url: str, body: object, headers: dict[str, str]) -> tuple[int, Any, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    for name, value in {"Content-Type": "application/json", "Accept": "application/json", **headers}.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), error.headers


def test_a_read_only_key_assembles_context_but_cannot_remember(served: Served, connect: McpConnect) -> None:
    reader = api_key_create(workspace=served.a.workspace, name="reader", scopes=["read"]).secret

    async def work(client: Client) -> tuple[CallToolResult, CallToolResult]:
        read = await client.call_tool("get_context", {"layer": served.session.pk, "query": "backups"})
        write = await client.call_tool("remember", {"layer": served.session.pk, "content": "not by a reader"})
        return read, write

    read, write = run(connect, reader, work)

    assert ok(read)["chunks"]
    assert error_code(write) == "insufficient_scope"
    assert not Item.objects.filter(content="not by a reader").exists()


def test_it_counts_tokens_for_a_model_and_answers_bad_input_with_the_apis_code(
    served: Served, connect: McpConnect
) -> None:
    async def work(client: Client) -> tuple[CallToolResult, CallToolResult]:
        counted = await client.call_tool(
            "count_tokens", {"model": "llama-3.1-8b", "messages": [{"role": "user", "content": "Hello there"}]}
        )
        return counted, await client.call_tool("count_tokens", {"model": "gpt-4o"})

    counted, missing = run(connect, served.a.secret, work)
    body = ok(counted)
    assert (body["encoding"], body["exact"], body["margin"]) == ("llama3", True, 0.0) and body["tokens"] > 2
    assert error_code(missing) == "invalid_text"
