"""A real daphne process on the test database, and what talks to it with the standard library alone.

`daphne` and `loaded_tenant` are fixtures (registered for every test by tests/conftest.py; asking
for `daphne` marks a test `slow`). `RawWebSocket` is a minimal RFC 6455 client (handshake, masked
text frames out, unmasked frames in), so a test needs no client library.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import struct
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from apps.core import background
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.processes import answers, database_url, free_port, serving
from tests.support.tenants import Tenant, make_tenant

FACTS = [
    ("backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("deploys", "Builds are promoted from staging to production every Tuesday."),
    ("android", "The mobile app crashes on Android 12 when the camera permission is denied."),
]


def http(method: str, url: str, body: object = None, key: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def daphne(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """The base URL of a daphne subprocess that shares this test's database; stopped afterwards."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "OMP_NUM_THREADS": "1"}
    log = tmp_path / "daphne.log"
    command = [str(Path(sys.executable).parent / "daphne"), "--bind", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with serving(
        [*command, "contextarch.asgi:application"], env=env, log=log, ready=lambda: answers(f"{base}/metrics")
    ):
        yield base


@pytest.fixture
def loaded_tenant(transactional_db: None) -> Iterator[Tenant]:
    """A tenant with a session of facts, committed and embedded, so another process can see them."""
    tenant = make_tenant("served")
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    items_create(
        layer=session, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    assert background.wait_idle(120)
    yield tenant
    assert background.wait_idle(120)


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
