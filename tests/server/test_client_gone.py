"""A client that leaves stops its assembly, on a real server (scripts/serve: granian), for each kind
of connection the API answers context on: a blocking `POST /api/v1/context/` (and its preview), the
SSE `GET /api/v1/context/stream/` and a WebSocket query.

As in tests/web/test_preview_cancel.py, the server's assembly is held mid-way by a table lock this
test takes on the items; the client drops its connection (the socket closed, no goodbye), the lock
goes, and the assembly must stop at its next stage boundary: counted once in /metrics, no record.
The worker is free at once: the same request answers afresh (not from a cache the cancelled one
filled) while it still holds its client. Before, the assembly ran on to its end (the cancel counter
never moved) and a WebSocket did not even read the disconnect until its query had finished.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection, transaction

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Item, Layer
from tests.support.cancelling import cancelled, patient_locks, project, waiting_on_a_lock  # noqa: F401 (fixtures)
from tests.support.daphne import RawWebSocket
from tests.support.processes import database_url, free_port, http_json, server_process
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server


@pytest.fixture
def server(patient_locks: None, transactional_db: None, tmp_path: Path) -> Iterator[tuple[str, Path]]:  # noqa: F811
    """scripts/serve with one granian worker on the test database; its base URL and log."""
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "ITEM_ACCESS_FLUSH_SECONDS": "0"}
    log = tmp_path / "serve.log"
    with server_process(env, free_port(), log, workers=1) as (base, _):
        wait_until(lambda: http_json("GET", f"{base}/metrics")[0] == 200, timeout=60, what="the worker")
        yield base, log


def body(layer: Layer) -> dict[str, object]:
    return {"layer": layer.pk, "query": "invoices region", "token_budget": 300, "timeout_ms": 0}


def http_request(base: str, method: str, path: str, secret: str, payload: bytes = b"") -> Callable[[], object]:
    """Send the request on a raw socket (the answer waits on the assembly); a function that drops it."""
    address = urllib.parse.urlsplit(base)
    sock = socket.create_connection((address.hostname, address.port), timeout=60)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {address.netloc}\r\nAuthorization: Bearer {secret}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    sock.sendall(head.encode() + payload)
    return sock.close


def websocket_query(base: str, path: str, secret: str, payload: dict[str, object]) -> Callable[[], object]:
    ws = RawWebSocket(base, path, secret)
    assert ws.status == 101
    ws.send_json({"type": "query", **payload})
    return ws.sock.close


def drop_mid_way(base: str, log: Path, send: Callable[[], Callable[[], object]]) -> dict[str, float]:
    """Hold the server's assembly on a lock, drop the client, let the assembly go on: the stages it
    stopped before, as /metrics counts them."""
    assert cancelled(base) == {}
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {Item._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        drop = send()
        wait_until(waiting_on_a_lock, timeout=90, what="the server to wait on the items lock")
        drop()
        wait_until(lambda: "went away" in log.read_text(), timeout=30, what="the server to see the client go")
    # The lock went at commit: the search that waited on it ends, and the next stage boundary stops the rest.
    stages = wait_until(lambda: cancelled(base), timeout=60, what="the server to count the cancelled assembly")
    assert sum(stages.values()) == 1 and "record" not in stages, stages
    wait_until(lambda: not waiting_on_a_lock(), timeout=30, what="the server's queries to end")
    return stages


def answered_afresh(base: str, tenant: Tenant, layer: Layer) -> None:
    auth = {"Authorization": f"Bearer {tenant.secret}"}
    status, _, answer = http_json("POST", f"{base}/api/v1/context/", body(layer), auth)
    assert status == 200 and answer["cached"] is False and answer["chunks"], answer
    records = AssemblyRecord.objects.filter(workspace=tenant.workspace)
    wait_until(lambda: records.count() == 1, timeout=30, what="this answer's record (written after the answer)")
    assert records.get().trace_id.hex == answer["trace_id"].replace("-", "")  # this one only


@pytest.mark.parametrize("path", ["/api/v1/context/", "/api/v1/context/preview/"])
def test_a_client_that_drops_a_blocking_request_stops_its_assembly(
    server: tuple[str, Path],
    project: tuple[Tenant, Layer, str],  # noqa: F811
    path: str,
) -> None:
    (base, log), (tenant, layer, _) = server, project
    payload = json.dumps(body(layer)).encode()
    drop_mid_way(base, log, lambda: http_request(base, "POST", path, tenant.secret, payload))
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()
    answered_afresh(base, tenant, layer)


def test_a_client_that_drops_the_sse_stream_stops_its_assembly(
    server: tuple[str, Path],
    project: tuple[Tenant, Layer, str],  # noqa: F811
) -> None:
    (base, log), (tenant, layer, _) = server, project
    query = urllib.parse.urlencode(body(layer))
    drop_mid_way(base, log, lambda: http_request(base, "GET", f"/api/v1/context/stream/?{query}", tenant.secret))
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()
    answered_afresh(base, tenant, layer)


def test_a_client_that_drops_the_websocket_stops_its_query(
    server: tuple[str, Path],
    project: tuple[Tenant, Layer, str],  # noqa: F811
) -> None:
    (base, log), (tenant, layer, _) = server, project
    drop_mid_way(base, log, lambda: websocket_query(base, "/ws/v1/context/", tenant.secret, body(layer)))
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()
    answered_afresh(base, tenant, layer)
