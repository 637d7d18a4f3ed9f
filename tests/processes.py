"""Helpers for tests that run parts of the service in real subprocesses (daphne, Celery, servers)."""

from __future__ import annotations

import socket
import time
from typing import Any

from contextarch.embedded_db import url_from_database


def database_url(entry: dict[str, Any]) -> str:
    """A DATABASE_URL for the connection `entry` (after setup, the test database)."""
    return url_from_database(entry)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
