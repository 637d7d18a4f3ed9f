"""The HTTP server of the benchmark (scripts/serve's workers, as `make run` serves), on this process's own database."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

from apps.core.database_url import url_from_database


def database_url() -> str:
    """DATABASE_URL for this process's database, so a subprocess sees the seeded rows."""
    return url_from_database(connection.settings_dict)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_serving(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start serving on port {port}:\n{log.read_text()[-2000:]}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/metrics")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.3)
        finally:
            conn.close()


@contextmanager
def http_server(
    *, workers: int, timeout: float = 90, port: int | None = None, env: dict[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """`scripts/serve` with `workers` processes on `port` (else a free port) of 127.0.0.1, using this
    process's database, with `env` over this process's environment; yields its base URL and its
    process id (the workers are its descendants)."""
    port = port or _free_port()
    extra = env or {}
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": str(workers),
        "PYTHON": sys.executable,
        **extra,
    }
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [str(Path(settings.BASE_DIR) / "scripts" / "serve")],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_until_serving(process, port, log, timeout)
            yield f"http://127.0.0.1:{port}", process.pid
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
