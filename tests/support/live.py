"""A live uvicorn server (the production ASGI server of scripts/serve) on the test database.

Tests that drive the service from outside (the MCP SDK's clients, the Python client) use it
through the `uvicorn_live` fixture: one worker process, the same `contextarch.asgi:application`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from tests.support.processes import answers, database_url, serving
from tests.support.waiting import wait_until
from tests.support.workers import worker_ports

# Live servers of this suite listen in this range (other test runs on the machine use others), each
# xdist worker in its own slice of it.
_BASE = int(os.environ.get("LIVE_SERVER_PORT_BASE", "8500"))
PORTS = worker_ports(range(_BASE, _BASE + 100))


def port_free_in(ports: range) -> int:
    """The first port of `ports` nobody listens on."""
    for port in ports:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}..{ports.stop - 1}")


@contextmanager
def uvicorn_server(log: Path, port: int | None = None, settings: dict[str, str] | None = None) -> Iterator[str]:
    """The base URL of a uvicorn process serving the test database (`settings`: more environment); stopped on exit."""
    port = port or port_free_in(PORTS)
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "OMP_NUM_THREADS": "1",
        # Access counts written after each answer, not a second later: a late write could land while the
        # next test's database is being flushed (a TRUNCATE racing an insert can deadlock).
        "ITEM_ACCESS_FLUSH_SECONDS": "0",
        **(settings or {}),
    }
    command = [sys.executable, "-m", "uvicorn", "contextarch.asgi:application", "--host", "127.0.0.1"]
    base = f"http://127.0.0.1:{port}"
    with serving(
        [*command, "--port", str(port), "--log-level", "warning"],
        env=env,
        log=log,
        ready=lambda: answers(f"{base}/metrics"),
    ):
        yield base


@pytest.fixture(scope="session")
def uvicorn_live(
    django_db_setup: None, django_db_blocker: pytest.FixtureDef, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One uvicorn for the session's live tests; each test commits its own data (`transactional_db`)."""
    with django_db_blocker.unblock(), uvicorn_server(tmp_path_factory.mktemp("live") / "uvicorn.log") as base:
        yield base


def server_idle(base: str, key: str) -> None:
    """Wait until the live server's own background queue is empty (the communities, summaries and
    embeddings that the test's writes started there), so none of it runs into the next test's flush
    (a TRUNCATE racing a row lock deadlocked once at the teardown of a demo test)."""

    def depth() -> int:
        request = urllib.request.Request(f"{base}/api/v1/status/", headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(json.load(answer)["background"]["queue_depth"])

    def empty_twice() -> bool:  # a write due "0 s later" (the access counts) is queued a moment after the answer
        if depth() > 0:
            return False
        time.sleep(0.2)
        return depth() <= 0

    wait_until(empty_twice, timeout=120, what="the live server's background queue")
