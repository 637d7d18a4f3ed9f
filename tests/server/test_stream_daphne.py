"""A real daphne streams context: Server-Sent Events over HTTP, and the WebSocket over a raw socket.

The WebSocket client is a minimal RFC 6455 one written here (handshake, masked text frames out,
unmasked frames in), so the test needs no client library beyond the standard library.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import struct
import urllib.parse
import urllib.request
from typing import Any

import pytest

from tests.assembly.test_stream_sse import assert_same_chunks
from tests.conftest import Tenant
from tests.server.test_daphne import daphne, http, loaded_tenant  # noqa: F401  (fixtures)

pytestmark = pytest.mark.server

QUESTION = "How long are database backups kept?"
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class RawWebSocket:
    """Just enough of a WebSocket client for a test: text frames, no extensions."""

    def __init__(self, base: str, path: str, secret: str | None) -> None:
        address = urllib.parse.urlsplit(base)
        self.sock = socket.create_connection((address.hostname, address.port), timeout=60)
        self.stream = self.sock.makefile("rb")
        key = base64.b64encode(os.urandom(16)).decode()
        headers = [
            f"GET {path} HTTP/1.1",
            f"Host: {address.netloc}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ] + ([f"Authorization: Bearer {secret}"] if secret else [])
        self.sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        lines = []
        while (line := self.stream.readline().decode().strip()) != "":
            lines.append(line)
        self.status = int(lines[0].split()[1])
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        assert self.status != 101 or f"sec-websocket-accept: {accept.lower()}" in [x.lower() for x in lines]

    def send_json(self, message: object) -> None:
        payload = json.dumps(message).encode()
        size = len(payload)
        if size < 126:
            header = bytes([0x81, 0x80 | size])
        elif size < 1 << 16:
            header = bytes([0x81, 0x80 | 126]) + struct.pack("!H", size)
        else:
            header = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", size)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive_json(self) -> Any:
        """The next text message (frames joined until FIN); a close frame raises ConnectionError."""
        data = b""
        while True:
            first, second = self.stream.read(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self.stream.read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self.stream.read(8))[0]
            payload = self.stream.read(size)
            if first & 0x0F == 0x8:
                raise ConnectionError(f"closed: {struct.unpack('!H', payload[:2])[0] if payload else None}")
            data += payload
            if first & 0x80:
                return json.loads(data)

    def close(self) -> None:
        self.sock.sendall(bytes([0x88, 0x82]) + b"\0\0\0\0" + struct.pack("!H", 1000))
        self.stream.close()
        self.sock.close()


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


def test_it_streams_server_sent_events_over_real_http(daphne: str, loaded_tenant: Tenant) -> None:  # noqa: F811
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


def test_it_streams_over_a_real_websocket_query_after_query(daphne: str, loaded_tenant: Tenant) -> None:  # noqa: F811
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
