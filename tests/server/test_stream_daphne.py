"""A real daphne streams context: Server-Sent Events over HTTP, and the WebSocket over a raw socket
(tests/support/daphne.py's `RawWebSocket`)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any

import pytest

from tests.assembly.streams import assert_same_chunks
from tests.support.daphne import RawWebSocket, http
from tests.support.tenants import Tenant

pytestmark = pytest.mark.server

QUESTION = "How long are database backups kept?"


def sse_get(url: str, key: str) -> tuple[dict[str, str], list[tuple[str, dict[str, Any]]]]:
    """Read the stream line by line, as an EventSource would, until it ends."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}", "Accept": "text/event-stream"})
    events: list[tuple[str, dict[str, Any]]] = []
    with urllib.request.urlopen(request, timeout=60) as response:
        headers = dict(response.headers.items())
        name = ""
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((name, json.loads(line.removeprefix("data: "))))
    return headers, events


def test_it_streams_server_sent_events_over_real_http(daphne: str, loaded_tenant: Tenant) -> None:
    body = {"layer": loaded_tenant.root.pk, "query": QUESTION, "token_budget": 60, "format": "json"}
    status, text = http("POST", f"{daphne}/api/v1/context/", body, key=loaded_tenant.secret)
    assert status == 200, text
    expected = json.loads(text)

    headers, events = sse_get(f"{daphne}/api/v1/context/stream?{urllib.parse.urlencode(body)}", loaded_tenant.secret)

    assert headers["Content-Type"] == "text/event-stream" and headers["Cache-Control"] == "no-cache"
    assert [name for name, _ in events] == ["chunk"] * len(expected["chunks"]) + ["complete"]
    assert_same_chunks([data for _, data in events[:-1]], expected["chunks"])
    complete = events[-1][1]
    assert complete["total_chunks"] == len(expected["chunks"])
    assert (complete["total_tokens"], complete["token_budget"]) == (expected["total_tokens"], 60)
    assert complete["truncated_count"] == expected["truncated_count"] and complete["elapsed_ms"] >= 0


def test_it_streams_over_a_real_websocket_query_after_query(daphne: str, loaded_tenant: Tenant) -> None:
    in_url = RawWebSocket(daphne, f"/ws/v1/context/?api_key={loaded_tenant.secret}", None)
    assert in_url.status == 403  # a key in the URL: the consumer closes before accepting, daphne refuses
    in_url.sock.close()
    by_message = RawWebSocket(daphne, "/ws/v1/context/", None)
    assert by_message.status == 101  # no header: the first message must authenticate
    by_message.send_json({"type": "auth", "api_key": loaded_tenant.secret})
    assert by_message.receive_json() == {"type": "auth", "data": {"workspace": loaded_tenant.workspace.slug}}
    by_message.sock.close()
    ws = RawWebSocket(daphne, "/ws/v1/context/", loaded_tenant.secret)
    assert ws.status == 101
    try:
        ws.send_json({"type": "query", "layer": loaded_tenant.root.pk, "query": QUESTION, "token_budget": 0})
        assert ws.receive_json()["error"]["code"] == "invalid_token_budget"
        for budget in (40, 400):
            body = {"layer": loaded_tenant.root.pk, "query": QUESTION, "token_budget": budget}
            expected = json.loads(http("POST", f"{daphne}/api/v1/context/", body, key=loaded_tenant.secret)[1])
            ws.send_json({"type": "query", **body})
            events = [ws.receive_json()]
            while events[-1]["type"] == "chunk":
                events.append(ws.receive_json())
            assert [e["type"] for e in events] == ["chunk"] * len(expected["chunks"]) + ["complete"]
            assert_same_chunks([e["data"] for e in events[:-1]], expected["chunks"])
            assert events[-1]["data"]["total_tokens"] == expected["total_tokens"] <= budget
            assert events[-1]["data"]["total_chunks"] == len(expected["chunks"])
    finally:
        ws.close()
