"""Limits at the edge: an oversized body is refused unread, oversized content before any work, all 413."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from apps.layers.models import Item
from tests.support.processes import database_url, free_port, listens, serving
from tests.support.tenants import Tenant


@pytest.fixture
def served(transactional_db: None, tmp_path: Path) -> Iterator[int]:
    """The port of scripts/serve (one uvicorn worker) on the test database."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "PORT": str(port), "WEB_WORKERS": "1"}
    log = tmp_path / "serve.log"
    serve = [str(Path(settings.BASE_DIR) / "scripts" / "serve")]
    with serving(serve, env=env, log=log, ready=lambda: listens(port), stop_timeout=60):
        yield port


def _answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    raw = b""
    while b"\r\n\r\n" not in raw or len(raw.split(b"\r\n\r\n", 1)[1]) < 20:
        chunk = sock.recv(65536)
        if not chunk:
            break
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body.split(b"\r\n0\r\n")[0] if b"\r\n" in body[:8] else body)


@pytest.mark.server
def test_a_body_declared_over_the_cap_is_refused_in_under_a_second_without_being_read(served: int) -> None:
    declared = 100 * 1024 * 1024
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /api/v1/items/bulk/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer nothing\r\nContent-Length: " + str(declared).encode() + b"\r\n\r\n"
        )
        sock.sendall(b'{"items": [' + b'{"content": "x"},' * 10_000)  # a start; the rest never goes
        status, body = _answer(sock)
        took = time.monotonic() - started
    assert status == 413 and took < 1.0, (status, took)
    assert body["error"]["code"] == "request_too_large"  # type: ignore[index]
    assert body["error"]["details"] == {"limit_bytes": settings.MAX_REQUEST_BODY_BYTES}  # type: ignore[index]


@pytest.mark.server
def test_a_chunked_body_is_cut_off_at_the_cap(served: int) -> None:
    chunk = b"x" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /api/v1/items/bulk/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        try:
            for _ in range(settings.MAX_REQUEST_BODY_BYTES // len(chunk) + 5):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading at the cap
        status, body = _answer(sock)
        took = time.monotonic() - started
    assert status == 413 and body["error"]["code"] == "request_too_large", body  # type: ignore[index]
    assert took < 5.0, took


@override_settings(ITEM_MAX_CONTENT_CHARS=1_000)
def test_one_item_over_the_content_cap_is_a_413_naming_the_item(tenant: Tenant) -> None:
    items = [{"kind": "memory", "type": "fact", "content": "fine"}, {"kind": "document", "content": "y" * 1_001}]
    response = tenant.client.post("/api/v1/items/bulk/", {"layer": tenant.root.pk, "items": items}, format="json")
    assert response.status_code == 413, response.content
    error = response.json()["error"]
    assert error["code"] == "content_too_large"
    assert error["details"] == {"limit_chars": 1_000, "chars": 1_001, "index": 1}
    assert not Item.objects.exists()


@override_settings(REQUEST_MAX_CONTENT_CHARS=5_000)
def test_a_request_over_the_total_content_cap_is_a_413_before_any_item_is_built(tenant: Tenant) -> None:
    items = [{"kind": "memory", "type": "fact", "content": "z" * 2_000} for _ in range(3)]
    response = tenant.client.post("/api/v1/items/bulk/", {"layer": tenant.root.pk, "items": items}, format="json")
    assert response.status_code == 413, response.content
    assert response.json()["error"]["code"] == "request_content_too_large"
    assert response.json()["error"]["details"] == {"limit_chars": 5_000, "chars": 6_000}
    patched = tenant.client.post(
        "/api/v1/items/", {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "ok"}, format="json"
    )
    assert patched.status_code == 201
