"""The status WebSocket: authenticated on connect and on every message, scoped to the key's workspace."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator

from apps.workspaces.services import api_key_revoke
from contextarch.asgi import application
from tests.conftest import make_tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_it_refuses_a_connection_without_a_valid_key() -> None:
    for path in ("/ws/v1/status/", "/ws/v1/status/?api_key=ca_wrong"):
        communicator = WebsocketCommunicator(application, path)
        connected, code = await communicator.connect()
        assert not connected and code == 4401


async def test_it_answers_status_for_the_keys_workspace_until_the_key_is_revoked() -> None:
    tenant = await sync_to_async(make_tenant)("ws")
    communicator = WebsocketCommunicator(
        application, "/ws/v1/status/", headers=[(b"authorization", f"Bearer {tenant.secret}".encode())]
    )
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to({"type": "status"})
    reply = await communicator.receive_json_from(timeout=10)
    assert reply["type"] == "status" and reply["data"]["workspace"] == "ws" and reply["data"]["layers"] == 1
    await communicator.send_json_to({"type": "nonsense"})
    assert (await communicator.receive_json_from())["error"]["code"] == "invalid_message"
    key = await sync_to_async(lambda: tenant.workspace.api_keys.get())()
    await sync_to_async(api_key_revoke)(api_key=key)
    await communicator.send_json_to({"type": "status"})
    assert (await communicator.receive_json_from())["error"]["code"] == "invalid_api_key"
    await communicator.disconnect()


async def test_it_answers_unstorable_or_deep_messages_with_an_error_and_stays_open() -> None:
    tenant = await sync_to_async(make_tenant)("wsdeep")
    for path in ("/ws/v1/status/", "/ws/v1/context/"):
        communicator = WebsocketCommunicator(
            application, path, headers=[(b"authorization", f"Bearer {tenant.secret}".encode())]
        )
        connected, _ = await communicator.connect()
        assert connected
        for text, code in [
            ('{"type": "query", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "json_too_deep"),
            ('{"type": "query", "min_confidence": NaN}', "invalid_min_confidence"),
            ('{"type": "query", "query": "a\\u0000b"}', "invalid_query"),
            ('{"type": "query", "options": {"query": "\\ud800"}}', "invalid_options"),
            ("{not json", "malformed_json"),
        ]:
            await communicator.send_to(text_data=text)
            reply = await communicator.receive_json_from(timeout=10)
            assert reply["type"] == "error" and reply["error"]["code"] == code, (path, reply)
        await communicator.send_to(bytes_data=b"\x00\x01")
        assert (await communicator.receive_json_from(timeout=10))["error"]["code"] == "malformed_json"
        if path == "/ws/v1/status/":
            await communicator.send_json_to({"type": "status"})
            assert (await communicator.receive_json_from(timeout=10))["type"] == "status"
        else:
            await communicator.send_json_to({"type": "query", "layer": -1, "query": "x", "tokn_budget": 5})
            assert (await communicator.receive_json_from(timeout=10))["error"]["code"] == "unknown_fields"
        await communicator.disconnect()
