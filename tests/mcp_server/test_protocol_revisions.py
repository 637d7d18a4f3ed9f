"""Each MCP protocol revision against `/mcp/` and the stdio relay: the stateless 2026-07-28 and older clients.

The official SDK (mcp 2.3.0, the newest on PyPI) speaks 2026-07-28 by default: it probes
`server/discover` and sends each request as a self-contained envelope, without `initialize` and
without a session id. `mode="legacy"` is its handshake client (2025-11-25). Clients older than the
SDK (2024-11-05, 2025-03-26) are played by hand, as JSON-RPC over HTTP and over stdio.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_server.served import STDIO_COMMAND, Served

pytestmark = pytest.mark.server
NEWEST, HANDSHAKE = "2026-07-28", "2025-11-25"
OLD_REVISIONS = ["2024-11-05", "2025-03-26"]
QUESTION = "When are the database backups taken?"


async def _session_work(client: Client, served: Served) -> dict[str, Any]:
    tools = {t.name for t in (await client.list_tools()).tools}
    answer = await client.call_tool("get_context", {"layer_external_id": "sess-a", "query": QUESTION})
    summary = await client.read_resource(f"contextarch://layers/{served.session.pk}/summary/sentence")
    prompt = await client.get_prompt("chat_turn", {"message": "Backups?", "layer": str(served.a.root.pk)})
    return {
        "version": client.session.protocol_version,
        "tools": tools,
        "context": (answer.structured_content or {}).get("context", ""),
        "summary": summary.contents[0].text,  # type: ignore[union-attr]
        "prompt": prompt.messages[0].content.text,  # type: ignore[union-attr]
        "instructions": client.instructions or "",
    }


@pytest.mark.parametrize(("mode", "version"), [("auto", NEWEST), ("legacy", HANDSHAKE)])
def test_the_sdk_client_of_each_revision_uses_every_tool_resource_and_prompt_over_http(
    served: Served, mode: str, version: str
) -> None:
    sent: list[tuple[str | None, str | None]] = []
    session_ids: list[str] = []

    async def on_request(request: httpx2.Request) -> None:
        method = json.loads(request.content).get("method") if request.content else None
        sent.append((method, request.headers.get("mcp-protocol-version")))

    async def on_response(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            session_ids.append(response.headers["mcp-session-id"])

    async def session() -> dict[str, Any]:
        hooks = {"request": [on_request], "response": [on_response]}
        headers = {"Authorization": f"Bearer {served.a.secret}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60, event_hooks=hooks) as http:
            async with Client(streamable_http_client(f"{served.base}/mcp/", http_client=http), mode=mode) as c:
                return await _session_work(c, served)

    done = asyncio.run(session())

    assert done["version"] == version
    assert "get_context" in done["tools"] and "02:00 UTC" in done["context"]
    assert done["summary"] and "02:00 UTC" in done["prompt"] and done["instructions"].startswith("Context Architect")
    assert session_ids == []  # stateless in both eras: any worker answers any request
    methods = [m for m, _ in sent]
    if version == NEWEST:
        assert methods[0] == "server/discover" and "initialize" not in methods
        assert {v for m, v in sent if m != "server/discover"} == {NEWEST}
    else:
        assert methods[:2] == ["initialize", "notifications/initialized"] and "server/discover" not in methods


@pytest.mark.parametrize(("mode", "version"), [("auto", NEWEST), ("legacy", HANDSHAKE)])
def test_the_sdk_client_of_each_revision_uses_the_stdio_relay(served: Served, mode: str, version: str) -> None:
    env = {"CONTEXTARCH_URL": served.base, "CONTEXTARCH_API_KEY": served.a.secret}

    async def session() -> dict[str, Any]:
        async with Client(StdioServerParameters(command=str(STDIO_COMMAND), env=env), mode=mode) as c:
            return await _session_work(c, served)

    done = asyncio.run(session())

    assert done["version"] == version
    assert "get_context" in done["tools"] and "02:00 UTC" in done["context"]
    assert done["summary"] and "02:00 UTC" in done["prompt"] and done["instructions"].startswith("Context Architect")


def _rpc(ident: int | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        message["id"] = ident
    return message


def _old_client_messages(version: str) -> list[dict[str, Any]]:
    """What a client of `version` sends: the handshake, then a tool list and a call."""
    hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "old-agent", "version": "0"}}
    call = {"name": "get_context", "arguments": {"layer_external_id": "sess-a", "query": QUESTION}}
    return [
        _rpc(1, "initialize", hello),
        _rpc(None, "notifications/initialized", {}),
        _rpc(2, "tools/list", {}),
        _rpc(3, "tools/call", call),
    ]


def _check_old_answers(answers: dict[int, dict[str, Any]], version: str) -> None:
    assert answers[1]["result"]["protocolVersion"] == version
    assert "get_context" in {t["name"] for t in answers[2]["result"]["tools"]}
    called = answers[3]["result"]
    assert called["isError"] is False and "02:00 UTC" in called["structuredContent"]["context"]


@pytest.mark.parametrize("version", OLD_REVISIONS)
def test_an_older_client_is_answered_in_its_own_revision_over_http(served: Served, version: str) -> None:
    answers: dict[int, dict[str, Any]] = {}
    statuses: list[int] = []
    headers = {"Authorization": f"Bearer {served.a.secret}", "Accept": "application/json, text/event-stream"}
    with httpx2.Client(headers=headers, timeout=60) as http:
        for message in _old_client_messages(version):
            extra = {} if message["method"] == "initialize" else {"mcp-protocol-version": version}
            response = http.post(f"{served.base}/mcp/", json=message, headers=extra)
            statuses.append(response.status_code)
            assert "mcp-session-id" not in response.headers
            if "id" in message:
                answers[message["id"]] = response.json()

    assert statuses == [200, 202, 200, 200]
    _check_old_answers(answers, version)


@pytest.mark.parametrize("version", OLD_REVISIONS)
def test_an_older_client_is_answered_in_its_own_revision_over_stdio(served: Served, version: str) -> None:
    env = {**os.environ, "CONTEXTARCH_URL": served.base, "CONTEXTARCH_API_KEY": served.a.secret}
    with subprocess.Popen(
        [str(STDIO_COMMAND)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as relay:
        assert relay.stdin is not None and relay.stdout is not None
        answers: dict[int, dict[str, Any]] = {}
        try:
            for message in _old_client_messages(version):
                relay.stdin.write(json.dumps(message) + "\n")
                relay.stdin.flush()
                while "id" in message and message["id"] not in answers:
                    line = relay.stdout.readline()
                    assert line, "the relay closed its output"
                    answer = json.loads(line)
                    if "id" in answer:
                        answers[answer["id"]] = answer
        finally:
            relay.stdin.close()
            relay.wait(30)

    _check_old_answers(answers, version)
