"""A real server stops assembling when the preview's stream is cancelled (its client disconnects).

The assembly is held mid-way by a table lock this test takes on the items (its searches wait on it);
the client then hangs up, the lock is released, and the server's assembly must stop at its next
stage boundary: counted as cancelled in /metrics, no record, nothing cached (the same request
afterwards is assembled afresh, and only then cached).
"""

from __future__ import annotations

import json
import socket
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.db import connection, transaction

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Item, Layer
from tests.support.cancelling import cancelled, patient_locks, project, waiting_on_a_lock  # noqa: F401 (fixtures)
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server


def open_stream(base: str, path: str, cookie: str) -> socket.socket:
    """Send the GET and read the response head (the body waits on the assembly); the open socket."""
    address = urllib.parse.urlsplit(base)
    sock = socket.create_connection((address.hostname, address.port), timeout=60)
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: {address.netloc}\r\nAccept: text/event-stream\r\n"
        f"Cookie: sessionid={cookie}\r\n\r\n".encode()
    )
    return sock


def stream_events(base: str, path: str, cookie: str) -> list[tuple[str, dict[str, object]]]:
    request = urllib.request.Request(f"{base}{path}", headers={"Cookie": f"sessionid={cookie}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        body = response.read().decode()
    events = []
    for block in filter(None, body.split("\n\n")):  # the first is `progress`, sent at once
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def cancel_mid_way(base: str, path: str, cookie: str, log: Path, *, head: str = "") -> dict[str, float]:
    """Hold the server's assembly on a lock, hang up (after reading `head`, if any), let it go on:
    the stages it stopped before, as /metrics counts them."""
    assert cancelled(base) == {}
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {Item._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        sock = open_stream(base, path, cookie)
        received = ""
        while head not in received and (part := sock.recv(4096).decode()):
            received += part
        assert received.startswith("HTTP/1.1 200") if head else not received, received
        wait_until(waiting_on_a_lock, timeout=90, what="the server to wait on the items lock")
        sock.close()  # the page's Cancel: the request is aborted, the connection closes
        wait_until(lambda: "client went away" in log.read_text(), timeout=30, what="the server to see it")
    # The lock went at commit: the search that waited on it finishes, and the next stage boundary stops the rest.
    stages = wait_until(lambda: cancelled(base), timeout=60, what="the server to count the cancelled assembly")
    assert sum(stages.values()) == 1, stages
    wait_until(lambda: not waiting_on_a_lock(), timeout=30, what="the server's queries to end")
    return stages


def query_string(layer: Layer) -> str:
    return urllib.parse.urlencode({"layer": layer.pk, "query": "invoices region", "token_budget": 300, "timeout_ms": 0})


def test_a_cancelled_stream_stops_the_assembly_and_leaves_nothing_behind(
    patient_locks: None,  # noqa: F811
    daphne: str,
    project: tuple[Tenant, Layer, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    tenant, layer, cookie = project
    path = f"/preview/stream/?{query_string(layer)}"
    stages = cancel_mid_way(daphne, path, cookie, tmp_path / "daphne.log", head="event: progress")
    assert "the client left" in (tmp_path / "daphne.log").read_text()  # the stream's own note
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()  # never recorded

    fresh = stream_events(daphne, path, cookie)
    assert fresh[-1][0] == "complete" and fresh[-1][1]["cached"] is False  # nothing partial was cached
    assert fresh[-1][1]["total_chunks"] == len(fresh) - 2 > 0
    again = stream_events(daphne, path, cookie)
    assert again[-1][1]["cached"] is True  # the complete one was
    assert cancelled(daphne) == stages  # and neither of them was cancelled


def test_a_cancelled_preview_page_stops_the_assembly_and_records_nothing(
    patient_locks: None,  # noqa: F811
    daphne: str,
    project: tuple[Tenant, Layer, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    tenant, layer, cookie = project
    path = f"/preview/?{query_string(layer)}"
    # The page waits on the lock before its assembly (its layer list counts items): once the client
    # has gone, the assembly stops at its first stage boundary.
    stages = cancel_mid_way(daphne, path, cookie, tmp_path / "daphne.log")  # no head: the view is still working
    assert stages == {"embedding": 1.0}
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()

    request = urllib.request.Request(f"{daphne}{path}", headers={"Cookie": f"sessionid={cookie}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 200 and "preview-result" in response.read().decode()
    wait_until(lambda: AssemblyRecord.objects.filter(workspace=tenant.workspace).count() == 1, what="one record")
    assert cancelled(daphne) == stages
