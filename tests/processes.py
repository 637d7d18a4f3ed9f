"""Helpers for tests that run parts of the service in real subprocesses (daphne, Celery, servers)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from django.db import connection

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


ROOT = Path(__file__).resolve().parents[1]


class CeleryBroker:
    """A Redis database as the Celery broker of subprocesses that share this test's database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.redis = redis.Redis.from_url(url)
        self.redis.flushdb()
        self.env = dict(
            os.environ, REDIS_URL=url, DATABASE_URL=database_url(connection.settings_dict), OMP_NUM_THREADS="1"
        )

    def queued_tasks(self) -> list[str]:
        return [json.loads(raw)["headers"]["task"] for raw in self.redis.lrange("celery", 0, -1)]

    def shell(self, code: str) -> str:
        """Run `code` in `manage.py shell` configured with the broker; its stdout."""
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    @contextmanager
    def worker(self) -> Iterator[subprocess.Popen[str]]:
        """A `celery worker` (solo pool) on the broker, stopped and the broker emptied afterwards."""
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "contextarch", "worker", "--pool", "solo", "--loglevel", "WARNING"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            yield process
        finally:
            process.terminate()
            process.wait(30)
            self.redis.flushdb()

    @staticmethod
    def wait_for(process: subprocess.Popen[str], done: Callable[[], bool], timeout: float = 120) -> None:
        """Poll `done` until it holds, failing with the worker's output if the worker dies."""
        deadline = time.time() + timeout
        while time.time() < deadline and not done():
            assert process.poll() is None, process.communicate()[0][-3000:]
            time.sleep(0.5)
