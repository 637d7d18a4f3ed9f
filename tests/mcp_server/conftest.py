"""A live server with two workspaces, and MCP clients of the official SDK over HTTP and stdio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from apps.core import background
from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.services import layer_summarize
from tests.mcp_server.served import MESSAGES, STDIO_COMMAND, McpConnect, Served
from tests.support.live import server_idle
from tests.support.tenants import make_tenant

FACTS = [
    ("backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("deploys", "Builds are promoted from staging to production every Tuesday."),
]


@pytest.fixture
def served(transactional_db: None, uvicorn_live: str) -> Iterator[Served]:
    a, b = make_tenant("acme"), make_tenant("globex")
    session = layer_create(workspace=a.workspace, kind="session", name="s1", parent=a.root, external_id="sess-a")
    items_create(
        layer=session, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    parent = None
    for role, content, tasks in MESSAGES:
        (message,) = items_create(
            layer=session, items=[ItemInput(kind="message", role=role, content=content, task_ids=tasks, parent=parent)]
        )
        parent = message.pk
    assert background.wait_idle(120)
    layer_summarize(layer=session, force=True, extractive=True)
    yield Served(base=uvicorn_live, a=a, b=b, session=session)
    assert background.wait_idle(120)
    server_idle(uvicorn_live, a.secret)


@pytest.fixture(params=["http", "stdio"])
def connect(request: pytest.FixtureRequest, served: Served) -> McpConnect:
    """`connect(key)`: an MCP client session with the service, over the transport of the test's parameter."""

    @asynccontextmanager
    async def over_http(key: str) -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{served.base}/mcp/", http_client=http)) as client:
                yield client

    @asynccontextmanager
    async def over_stdio(key: str) -> AsyncIterator[Client]:
        env = {"CONTEXTARCH_URL": served.base, "CONTEXTARCH_API_KEY": key}
        async with Client(StdioServerParameters(command=str(STDIO_COMMAND), env=env)) as client:
            yield client

    return {"http": over_http, "stdio": over_stdio}[request.param]
