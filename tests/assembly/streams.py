"""The streamed answers' shared parts: a session of facts and its question, the events of an SSE body or of
one WebSocket query, and the comparison of streamed chunks with the non-streaming call's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator
from django.http import StreamingHttpResponse

from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from contextarch.asgi import application
from tests.support.tenants import Tenant

FACTS = {
    "backups": "Database backups are taken nightly at 02:00 UTC and kept for 35 days. Restores are tested monthly.",
    "restore": "Restoring a database backup takes about forty minutes for the main cluster. "
    "The replica cluster restores in ten minutes because it holds only the last week of data.",
    "deploys": "Builds are promoted from staging to production every Tuesday.",
    "android": "The mobile app crashes on Android 12 when the camera permission is denied.",
}
QUESTION = "How long are database backups kept and how long does a restore take?"


def load(tenant: Tenant) -> Layer:
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    items = [ItemInput(kind="memory", type="fact", content=text, external_id=key) for key, text in FACTS.items()]
    items.append(ItemInput(kind="spec", type="knowledge", content="Database backups are restored with pg_restore."))
    items_create(layer=session, items=items)
    return session


def sse_events(response: StreamingHttpResponse) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of an SSE body; the view streams from an async iterator, as daphne wants."""

    async def read() -> bytes:
        return b"".join([part async for part in response.streaming_content])

    events = []
    for block in async_to_sync(read)().decode().split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def assert_same_chunks(streamed: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """Equal field for field; scores may differ in the last digit (recency moves with the clock)."""
    assert [{**c, "score": None} for c in streamed] == [{**c, "score": None} for c in expected]
    assert [c["score"] for c in streamed] == pytest.approx([c["score"] for c in expected], abs=1e-5)


async def connect(secret: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        application, "/ws/v1/context/", headers=[(b"authorization", f"Bearer {secret}".encode())]
    )
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def receive_answer(communicator: WebsocketCommunicator) -> list[dict[str, Any]]:
    """The events of one query: chunks up to `complete`, or a single `error`."""
    events = [await communicator.receive_json_from(timeout=30)]
    while events[-1]["type"] == "chunk":
        events.append(await communicator.receive_json_from(timeout=30))
    return events


async def rest(tenant: Tenant, body: dict[str, Any]) -> dict[str, Any]:
    response = await sync_to_async(tenant.client.post)("/api/v1/context/", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()  # type: ignore[no-any-return]
