"""The status WebSocket: authenticated by the header or the first message (never the URL), on every
message again, scoped to the key's workspace and its `read` scope."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator

from apps.workspaces.services import api_key_create, api_key_revoke
from contextarch.asgi import application
from tests.support.tenants import make_tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def closed_with(communicator: WebsocketCommunicator) -> tuple[str, int]:
    """The error code sent before the close, and the close code."""
    error = await communicator.receive_json_from(timeout=10)
    closing = await communicator.receive_output(timeout=10)
    assert closing["type"] == "websocket.close"
    return error["error"]["code"], closing["code"]


async def test_it_refuses_a_key_in_the_url_even_a_valid_one() -> None:
    tenant = await sync_to_async(make_tenant)("ws")
    for path in (f"/ws/v1/status/?api_key={tenant.secret}", "/ws/v1/status/?api_key=ca_wrong"):
        communicator = WebsocketCommunicator(application, path)
        connected, code = await communicator.connect()
        assert not connected and code == 4401


async def test_it_refuses_a_bad_key_in_the_header() -> None:
    communicator = WebsocketCommunicator(application, "/ws/v1/status/", headers=[(b"authorization", b"Bearer ca_x")])
    connected, _ = await communicator.connect()
    assert connected  # the header's key was bad: the first message must authenticate, and this one does not
    await communicator.send_json_to({"type": "status"})
    assert await closed_with(communicator) == ("not_authenticated", 4401)


async def test_it_takes_the_key_from_the_first_message() -> None:
    tenant = await sync_to_async(make_tenant)("ws")
    communicator = WebsocketCommunicator(application, "/ws/v1/status/")
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to({"type": "auth", "api_key": tenant.secret})
    assert await communicator.receive_json_from(timeout=10) == {"type": "auth", "data": {"workspace": "ws"}}
    await communicator.send_json_to({"type": "status"})
    reply = await communicator.receive_json_from(timeout=10)
    assert reply["type"] == "status" and reply["data"]["workspace"] == "ws"
    await communicator.disconnect()


async def test_it_closes_when_the_first_message_is_not_a_good_auth() -> None:
    for first in ({"type": "status"}, {"type": "auth"}, {"type": "auth", "api_key": "ca_wrong"}, ["auth"]):
        communicator = WebsocketCommunicator(application, "/ws/v1/status/")
        connected, _ = await communicator.connect()
        assert connected
        await communicator.send_json_to(first)
        code, close_code = await closed_with(communicator)
        assert close_code == 4401 and code in {"not_authenticated", "invalid_api_key"}, first


async def test_it_closes_a_connection_that_never_authenticates(settings: object) -> None:
    settings.WEBSOCKET_AUTH_SECONDS = 0.2  # type: ignore[attr-defined]
    communicator = WebsocketCommunicator(application, "/ws/v1/status/")
    connected, _ = await communicator.connect()
    assert connected
    assert await closed_with(communicator) == ("not_authenticated", 4401)


async def test_it_refuses_a_key_without_the_read_scope() -> None:
    tenant = await sync_to_async(make_tenant)("ws")
    created = await sync_to_async(api_key_create)(workspace=tenant.workspace, name="writer", scopes=["write"])
    communicator = WebsocketCommunicator(application, "/ws/v1/status/")
    await communicator.connect()
    await communicator.send_json_to({"type": "auth", "api_key": created.secret})
    assert await closed_with(communicator) == ("insufficient_scope", 4403)


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


@pytest.mark.usefixtures("one_window")
async def test_each_message_counts_against_the_keys_rate(settings: object) -> None:
    settings.RATE_LIMIT_API_KEY = (3, 60)  # type: ignore[attr-defined]
    tenant = await sync_to_async(make_tenant)("ws")
    communicator = WebsocketCommunicator(
        application, "/ws/v1/status/", headers=[(b"authorization", f"Bearer {tenant.secret}".encode())]
    )
    assert (await communicator.connect())[0]  # the connection is the first hit
    replies = []
    for _ in range(3):
        await communicator.send_json_to({"type": "status"})
        replies.append(await communicator.receive_json_from(timeout=10))
    assert [r["type"] for r in replies] == ["status", "status", "error"]
    assert replies[-1]["error"]["code"] == "rate_limited" and 1 <= replies[-1]["error"]["details"]["retry_after"] <= 60
    await communicator.disconnect()
