"""One request asked over the REST API, SSE and WebSocket gets one answer: equal field for field."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async as sync_to_async

from apps.core import background
from tests.assembly.streams import QUESTION, connect, load, receive_answer, rest, sse_events
from tests.support.tenants import Tenant, make_tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def tenant() -> AsyncIterator[Tenant]:
    t = await sync_to_async(make_tenant)("paths")
    await sync_to_async(load)(t)
    assert await sync_to_async(background.wait_idle)(120)
    yield t
    assert await sync_to_async(background.wait_idle)(120)


def streamed_answer(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A stream's events put back together in the shape of the REST answer."""
    assert [name for name, _ in events] == ["chunk"] * (len(events) - 1) + ["complete"]
    complete = dict(events[-1][1])
    assert complete.pop("total_chunks") == len(events) - 1
    return {**complete, "chunks": [data for _, data in events[:-1]]}


def without_timing(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "elapsed_ms"}


async def test_it_gives_the_same_answer_over_the_api_sse_and_websocket(tenant: Tenant) -> None:
    body = {"layer": tenant.root.pk, "query": QUESTION, "token_budget": 60, "format": "text", "timeout_ms": 0}
    first = await rest(tenant, body)  # assembles and caches; the three answers below are that assembly's
    assert first["chunks"] and not first["cached"]

    api = await rest(tenant, body)
    query = {key: str(value) for key, value in body.items()}
    response = await sync_to_async(tenant.client.get)("/api/v1/context/stream", query)
    assert response.status_code == 200
    sse = streamed_answer(await sync_to_async(sse_events)(response))
    communicator = await connect(tenant.secret)
    await communicator.send_json_to({"type": "query", **body})
    ws = streamed_answer([(e["type"], e["data"]) for e in await receive_answer(communicator)])
    await communicator.disconnect()

    assert api["cached"] and api["trace_id"] == first["trace_id"]
    assert without_timing(sse) == without_timing(api) == without_timing(ws)
    assert without_timing({**first, "cached": True}) == without_timing(api)
