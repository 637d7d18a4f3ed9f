"""scripts/serve: the ASGI server's workers serve HTTP and WebSocket; without DATABASE_URL the embedded
PostgreSQL they use stops when the server is stopped."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest
import websockets
from django.conf import settings

from tests.support.processes import database_url, free_port, wait_for_port
from tests.support.tenants import make_tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server


def _serve(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(Path(settings.BASE_DIR) / "scripts" / "serve")],
            cwd=settings.BASE_DIR,
            env={**env, "PORT": str(port), "WEB_WORKERS": "2"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _postmasters(pgdata: Path) -> list[int]:
    """The pid of the postmaster running on `pgdata`, if one is."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return []
    pid = int(pid_file.read_text().split()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return []
    return [pid]


def test_sigterm_stops_the_workers_and_then_the_embedded_database(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    port, var_dir = free_port(), tmp_path / "var"
    server = _serve({**env, "CONTEXTARCH_VAR_DIR": str(var_dir)}, port, tmp_path / "serve.log")
    try:
        wait_for_port(port, timeout=90)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
            assert response.status == 200
        assert _postmasters(var_dir / "pgdata")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    gone = wait_until(lambda: not _postmasters(var_dir / "pgdata"), interval=0.5, what="the postmaster stopped")
    assert gone, (tmp_path / "serve.log").read_text()[-2000:]


@pytest.mark.django_db(transaction=True)
def test_the_workers_answer_http_and_websocket_against_the_test_database(tmp_path: Path) -> None:
    from django.db import connection

    tenant = make_tenant("served")
    port = free_port()
    server = _serve(
        {**os.environ, "DATABASE_URL": database_url(connection.settings_dict)}, port, tmp_path / "serve.log"
    )
    try:
        wait_for_port(port, timeout=90)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/status/", headers={"Authorization": f"Bearer {tenant.secret}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read())["workspace"] == "served"

        async def status_over_websocket() -> dict[str, object]:
            async with websockets.connect(
                f"ws://127.0.0.1:{port}/ws/v1/status/",
                additional_headers={"Authorization": f"Bearer {tenant.secret}"},
            ) as ws:
                await ws.send(json.dumps({"type": "status"}))
                return json.loads(await asyncio.wait_for(ws.recv(), 30))

        message = asyncio.run(status_over_websocket())
        assert message["type"] == "status" and message["data"]["workspace"] == "served", message
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
