"""WebSocket /ws/v1/context/: queries in, the non-streaming call's chunks and the totals out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator

from apps.core import background
from apps.workspaces.services import api_key_revoke
from contextarch.asgi import application
from tests.assembly.streams import QUESTION, assert_same_chunks, connect, load, receive_answer, rest
from tests.support.tenants import Tenant, make_tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def tenant() -> AsyncIterator[Tenant]:
    """A tenant with committed items, embedded before the test starts so both calls see the same state."""
    t = await sync_to_async(make_tenant)("ws")
    await sync_to_async(load)(t)
    assert await sync_to_async(background.wait_idle)(120)
    yield t
    assert await sync_to_async(background.wait_idle)(120)


async def test_it_answers_no_query_before_a_valid_key(tenant: Tenant) -> None:
    for headers in ([], [(b"authorization", b"Bearer ca_wrong")]):
        communicator = WebsocketCommunicator(application, "/ws/v1/context/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected  # waiting for {"type": "auth", ...}
        await communicator.send_json_to({"type": "query", "layer": tenant.root.pk, "query": "backups"})
        assert (await communicator.receive_json_from())["error"]["code"] == "not_authenticated"
        assert (await communicator.receive_output())["code"] == 4401
    communicator = WebsocketCommunicator(application, f"/ws/v1/context/?api_key={tenant.secret}")
    connected, code = await communicator.connect()
    assert not connected and code == 4401  # never from the URL


async def test_it_answers_queries_after_an_auth_message(tenant: Tenant) -> None:
    communicator = WebsocketCommunicator(application, "/ws/v1/context/")
    assert (await communicator.connect())[0]
    await communicator.send_json_to({"type": "auth", "api_key": tenant.secret})
    assert (await communicator.receive_json_from(timeout=10))["type"] == "auth"
    await communicator.send_json_to({"type": "query", "layer": tenant.root.pk, "query": "backups"})
    assert (await receive_answer(communicator))[-1]["type"] == "complete"
    await communicator.disconnect()


async def test_it_streams_the_chunks_of_the_non_streaming_call_for_each_query(tenant: Tenant) -> None:
    # No deadline (timeout_ms 0): under load a partial REST answer would not be cached for the WebSocket to reuse.
    first = {"layer": tenant.root.pk, "query": QUESTION, "token_budget": 60, "format": "text", "timeout_ms": 0}
    second = {"layer": tenant.root.pk, "query": "database backups", "kinds": ["spec", "memory"], "token_budget": 500}
    second["timeout_ms"] = 0
    communicator = await connect(tenant.secret)

    for body, message in [
        (first, {"type": "query", **first}),
        (second, {"type": "query", "id": "q2", "query": second["query"], "options": second}),  # options: the POST body
    ]:
        expected = await rest(tenant, body)
        await communicator.send_json_to(message)
        events = await receive_answer(communicator)

        assert [e["type"] for e in events] == ["chunk"] * len(expected["chunks"]) + ["complete"]
        assert all(e.get("id") == message.get("id") for e in events)
        assert_same_chunks([e["data"] for e in events[:-1]], expected["chunks"])
        complete = events[-1]["data"]
        assert complete["total_chunks"] == len(expected["chunks"]) >= 1
        for key in ("total_tokens", "token_budget", "truncated_count", "context", "overflow"):
            assert complete[key] == expected[key], key
        # The same request again is answered from the assembly cache, with the original trace.
        assert complete["elapsed_ms"] >= 0 and complete["trace_id"] == expected["trace_id"] and complete["cached"]
    await communicator.disconnect()


async def test_it_answers_bad_input_with_an_error_and_keeps_the_connection_open(tenant: Tenant) -> None:
    other = await sync_to_async(make_tenant)("other")
    theirs = await sync_to_async(load)(other)
    communicator = await connect(tenant.secret)
    root = tenant.root.pk

    for message, code in [
        ({"type": "query", "layer": root, "query": "backups", "token_budget": 0}, "invalid_token_budget"),
        ({"type": "query", "layer": root, "query": "backups", "kinds": ["bogus"]}, "invalid_kinds"),
        ({"type": "query", "layer": root, "query": "  "}, "missing_query"),
        ({"type": "query", "query": "backups"}, "missing_layer"),
        ({"type": "query", "layer": theirs.pk, "query": "backups"}, "layer_not_found"),
        ({"type": "query", "layer": root, "query": "backups", "options": "fast"}, "invalid_options"),
        ({"type": "status"}, "invalid_message"),
        (["query"], "invalid_message"),
    ]:
        await communicator.send_json_to(message)
        reply = await communicator.receive_json_from(timeout=30)
        assert reply["type"] == "error" and reply["error"]["code"] == code, reply
        assert set(reply["error"]) == {"code", "message", "details"}
    await communicator.send_to(text_data="{not json")
    assert (await communicator.receive_json_from())["error"]["code"] == "malformed_json"

    await communicator.send_json_to({"type": "query", "layer": root, "query": "backups"})
    assert (await receive_answer(communicator))[-1]["type"] == "complete"
    await communicator.disconnect()


async def test_it_closes_with_4401_once_the_key_is_revoked(tenant: Tenant) -> None:
    communicator = await connect(tenant.secret)
    key = await sync_to_async(lambda: tenant.workspace.api_keys.get())()
    await sync_to_async(api_key_revoke)(api_key=key)

    await communicator.send_json_to({"type": "query", "layer": tenant.root.pk, "query": "backups"})

    assert (await communicator.receive_json_from())["error"]["code"] == "invalid_api_key"
    assert (await communicator.receive_output())["type"] == "websocket.close"


async def test_queries_sent_at_once_are_answered_one_after_the_other_in_order(tenant: Tenant) -> None:
    communicator = await connect(tenant.secret)
    ids = [f"q{n}" for n in range(5)]
    for n, query_id in enumerate(ids):  # more than one waits while the first is assembled
        query = {"type": "query", "id": query_id, "layer": tenant.root.pk, "query": f"backups {n}", "timeout_ms": 0}
        await communicator.send_json_to(query if n != 2 else {**query, "token_budget": 0})
    answers = [await receive_answer(communicator) for _ in ids]
    assert [{e["id"] for e in answer} for answer in answers] == [{query_id} for query_id in ids]
    assert [answer[-1]["type"] for answer in answers] == ["complete", "complete", "error", "complete", "complete"]
    await communicator.disconnect()
