"""A live server traced by its OTEL_* environment: each door continues the caller's trace, and a
proxied model call is a client span of its own.

REST, Server-Sent Events, WebSocket (the handshake's header or the query's own field) and MCP (the
HTTP header or the message's `_meta`, through the official SDK's client) each carry a W3C
`traceparent`; a local OTLP/HTTP receiver gets the spans and the test follows the parent links from
the caller's span down to the assembly's stages.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import websockets
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from apps.core import background
from apps.layers.services import ItemInput, items_create, layer_create
from apps.proxy.services import upstream_set
from tests.support.fake_provider import fake_provider
from tests.support.live import uvicorn_server
from tests.support.otlp_receiver import Caller, OtlpReceiver, ReceivedSpan, a_caller, children, named, otlp_receiver
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.server
SERVICE = "ca-live"
STAGES = {"resolve", "keyword_search", "ranking", "packing"}
FACTS = {
    "backups": "Database backups are taken nightly at 02:00 UTC and kept for 35 days.",
    "deploys": "Builds are promoted from staging to production every Tuesday.",
}
QUESTION = "When are the database backups taken?"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as r:
        yield r


@pytest.fixture(scope="module")
def traced_server(
    django_db_setup: None,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    receiver: OtlpReceiver,
) -> Iterator[str]:
    """A uvicorn whose environment turns tracing on, exporting to the receiver every 100 ms."""
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SERVICE_NAME": SERVICE, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    log: Path = tmp_path_factory.mktemp("traced") / "uvicorn.log"
    with django_db_blocker.unblock(), uvicorn_server(log, settings=env) as base:
        yield base


@dataclass
class Live:
    base: str
    tenant: Tenant
    receiver: OtlpReceiver


@pytest.fixture
def live(transactional_db: None, traced_server: str, receiver: OtlpReceiver) -> Iterator[Live]:
    tenant = make_tenant("acme")
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    items_create(
        layer=session, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS.items()]
    )
    items_create(layer=session, items=[ItemInput(kind="message", role="user", content="Are the backups encrypted?")])
    assert background.wait_idle(120)
    yield Live(base=traced_server, tenant=tenant, receiver=receiver)
    assert background.wait_idle(120)


def retrieval_under(spans: list[ReceivedSpan], parent: ReceivedSpan, slug: str) -> ReceivedSpan:
    """The assembly's span, a child of `parent`, with its stages as its own children."""
    # The request's own assembly: one that passed its deadline on a loaded machine is finished by a
    # warm-up in the same trace (contextarch.run "warm_up"); no deadline here, so there is none.
    (retrieval,) = [s for s in spans if s.name == f"retrieval {slug}" and "contextarch.run" not in s.attributes]
    assert retrieval.parent_span_id == parent.span_id
    assert retrieval.attributes["gen_ai.operation.name"] == "retrieval"
    assert STAGES <= {s.name for s in children(spans, retrieval)}
    assert all(s.service == SERVICE for s in spans)
    return retrieval


def has(*names: str) -> Any:
    """Ready when every one of `names` has arrived (a trace's spans come in several batches)."""
    return lambda spans: set(names) <= {s.name for s in spans}


def test_a_rest_and_an_sse_request_continue_the_callers_trace(live: Live) -> None:
    rest, sse = a_caller(), a_caller()
    body = json.dumps({"layer": live.tenant.root.pk, "query": QUESTION, "timeout_ms": 0}).encode()
    headers = {"Authorization": f"Bearer {live.tenant.secret}", "traceparent": rest.traceparent}
    post = urllib.request.Request(
        f"{live.base}/api/v1/context/", body, headers={**headers, "Content-Type": "application/json"}
    )
    assert urllib.request.urlopen(post, timeout=60).status == 200
    query = urllib.parse.urlencode(
        {"layer": live.tenant.root.pk, "query": "When are builds promoted?", "timeout_ms": 0}
    )
    get = urllib.request.Request(
        f"{live.base}/api/v1/context/stream?{query}",
        headers={**headers, "traceparent": sse.traceparent, "Accept": "text/event-stream"},
    )
    with urllib.request.urlopen(get, timeout=60) as response:
        assert b"event: complete" in response.read()

    for caller, name in ((rest, "POST /api/v1/context/"), (sse, "GET /api/v1/context/stream/?")):
        spans = live.receiver.wait_for(caller.trace_id, has(f"retrieval {live.tenant.workspace.slug}", name))
        request = named(spans, name)
        assert request.parent_span_id == caller.span_id and request.kind == "SPAN_KIND_SERVER"
        retrieval_under(spans, request, live.tenant.workspace.slug)


async def _ws_query(live: Live, headers: dict[str, str], message: dict[str, Any]) -> list[dict[str, Any]]:
    url = live.base.replace("http://", "ws://") + "/ws/v1/context/"
    headers = {"Authorization": f"Bearer {live.tenant.secret}", **headers}
    async with websockets.connect(url, additional_headers=headers) as ws:
        await ws.send(
            json.dumps({"type": "query", "layer": live.tenant.root.pk, "query": QUESTION, "timeout_ms": 0} | message)
        )
        events = [json.loads(await ws.recv())]
        while events[-1]["type"] == "chunk":
            events.append(json.loads(await ws.recv()))
    return events


def test_a_websocket_query_continues_the_trace_of_its_handshake_or_of_its_own_field(live: Live) -> None:
    handshake, own, other = a_caller(), a_caller(), a_caller()

    first = asyncio.run(_ws_query(live, {"traceparent": handshake.traceparent}, {}))
    own_field = {"traceparent": own.traceparent, "query": "When are builds promoted?"}  # not a cache hit
    second = asyncio.run(_ws_query(live, {"traceparent": other.traceparent}, own_field))

    assert first[-1]["type"] == second[-1]["type"] == "complete"
    slug = live.tenant.workspace.slug
    for caller in (handshake, own):
        spans = live.receiver.wait_for(caller.trace_id, has(f"retrieval {slug}"))
        retrieval = named(spans, f"retrieval {slug}")
        assert retrieval.parent_span_id == caller.span_id
        assert STAGES <= {s.name for s in children(spans, retrieval)}
    assert live.receiver.of_trace(other.trace_id) == []  # the message's own field wins


async def _mcp_call(live: Live, caller: Caller, *, header: bool, tool: str, arguments: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {live.tenant.secret}"}
    if header:
        headers["traceparent"] = caller.traceparent
    meta = None if header else {"traceparent": caller.traceparent}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(f"{live.base}/mcp/", http_client=http)) as client:
            return await client.call_tool(tool, arguments, meta=meta)  # type: ignore[arg-type]


@pytest.mark.parametrize("header", [True, False], ids=["traceparent-header", "meta-traceparent"])
def test_an_mcp_tool_call_continues_the_callers_trace_down_to_the_assembly(live: Live, header: bool) -> None:
    caller = a_caller()

    arguments = {"query": QUESTION, "layer": live.tenant.root.pk}
    result = asyncio.run(_mcp_call(live, caller, header=header, tool="get_context", arguments=arguments))

    assert not result.is_error, result.content
    slug = live.tenant.workspace.slug
    spans = live.receiver.wait_for(
        caller.trace_id, has(f"retrieval {slug}", "POST /api/v1/context/", "tools/call get_context")
    )
    tool = named(spans, "tools/call get_context")
    assert tool.parent_span_id == caller.span_id and tool.kind == "SPAN_KIND_SERVER"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "get_context"
    api = named(spans, "POST /api/v1/context/")  # the tool's in-process API call
    assert api.parent_span_id == tool.span_id
    retrieval_under(spans, api, slug)


def test_an_mcp_history_search_is_a_search_memory_span_under_the_tool_call(live: Live) -> None:
    caller = a_caller()

    result = asyncio.run(
        _mcp_call(live, caller, header=True, tool="search_history", arguments={"query": "backups encrypted"})
    )

    assert not result.is_error, result.content
    spans = live.receiver.wait_for(
        caller.trace_id, has("search_memory", "GET /api/v1/history/", "tools/call search_history")
    )
    tool = named(spans, "tools/call search_history")
    api = named(spans, "GET /api/v1/history/")
    search = named(spans, "search_memory")
    assert tool.parent_span_id == caller.span_id and api.parent_span_id == tool.span_id
    assert search.parent_span_id == api.span_id
    assert search.attributes["gen_ai.memory.record.count"] >= 1
    assert not any(live.tenant.secret in str(s) for s in spans)


def test_a_proxied_model_call_is_a_client_span_under_the_request_beside_its_assembly(live: Live) -> None:
    key = "sk-upstream-Secret-0123456789abcdef"
    with fake_provider("openai") as upstream:
        upstream_set(workspace=live.tenant.workspace, kind="openai", base_url=upstream.url, key=key)
        whole, streamed = a_caller(), a_caller()
        injected: dict[bool, int] = {}
        for caller, stream in ((whole, False), (streamed, True)):
            client = openai.OpenAI(
                base_url=f"{live.base}/proxy/openai/v1",
                api_key=live.tenant.secret,
                default_headers={"traceparent": caller.traceparent},
                max_retries=0,
            )
            asked = {"model": "gpt-4o", "messages": [{"role": "user", "content": QUESTION}], "max_tokens": 64}
            options = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
            with client.chat.completions.with_streaming_response.create(**asked, **options) as answer:  # type: ignore[call-overload]
                injected[stream] = int(answer.headers["x-context-tokens"])
                assert b"The backups" in answer.read()

    for caller, stream in ((whole, False), (streamed, True)):
        spans = live.receiver.wait_for(caller.trace_id, has("chat gpt-4o", f"retrieval {live.tenant.workspace.slug}"))
        request = named(spans, "POST /proxy/openai/v1/chat/completions")
        call = named(spans, "chat gpt-4o")
        assert request.parent_span_id == caller.span_id and call.parent_span_id == request.span_id
        assert call.kind == "SPAN_KIND_CLIENT"
        assert retrieval_under(spans, request, live.tenant.workspace.slug).end_ns <= call.start_ns  # context first
        attributes = call.attributes
        assert attributes["gen_ai.operation.name"] == "chat" and attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"] == "gpt-4o" and attributes["gen_ai.request.max_tokens"] == 64
        assert attributes["gen_ai.usage.input_tokens"] == 1234 and attributes["gen_ai.usage.output_tokens"] == 9
        assert attributes["server.address"] == "127.0.0.1" and attributes["http.response.status_code"] == 200
        assert attributes["contextarch.stream"] is stream
        assert attributes["contextarch.context_tokens"] == injected[stream]  # as X-Context-Tokens said
        assert attributes["contextarch.prompt_tokens"] > 0 and "error.type" not in attributes
        assert not any(key in str(s) or live.tenant.secret in str(s) for s in spans)


def test_a_proxied_stream_the_client_leaves_ends_its_span_as_client_gone(live: Live) -> None:
    caller = a_caller()
    with fake_provider("openai") as upstream:
        upstream.gap = 1.0  # three pieces a second apart: the client leaves after the first
        upstream_set(workspace=live.tenant.workspace, kind="openai", base_url=upstream.url, key="sk-up-0123456789")
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": QUESTION}], "stream": True}
        headers = {"Authorization": f"Bearer {live.tenant.secret}", "traceparent": caller.traceparent}
        with (
            httpx2.Client(timeout=30) as client,
            client.stream(
                "POST", f"{live.base}/proxy/openai/v1/chat/completions", json=body, headers=headers
            ) as answer,
        ):
            assert answer.status_code == 200
            assert b"data:" in next(answer.iter_bytes())

        spans = live.receiver.wait_for(caller.trace_id, has("chat gpt-4o"))
    call = named(spans, "chat gpt-4o")
    assert call.attributes["error.type"] == "client_gone" and call.attributes["http.response.status_code"] == 200
