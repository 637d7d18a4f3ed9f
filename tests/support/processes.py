"""Helpers for tests that run parts of the service in real subprocesses (daphne, Celery, servers)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from django.db import connection

from apps.core.database_url import url_from_database
from tests.support.waiting import wait_until


def database_url(entry: dict[str, Any]) -> str:
    """A DATABASE_URL for the connection `entry` (after setup, the test database)."""
    return url_from_database(entry)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listens(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def answers(url: str) -> bool:
    """Whether a GET of `url` gets an HTTP answer (any status but a refusal or a reset)."""
    try:
        urllib.request.urlopen(url, timeout=2).close()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    wait_until(lambda: listens(port), timeout=timeout, interval=0.2, what=f"something listening on 127.0.0.1:{port}")


ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def serving(
    command: list[str],
    *,
    env: dict[str, str],
    log: Path,
    ready: Callable[[], bool],
    timeout: float = 90,
    stop_timeout: float = 20,
) -> Iterator[subprocess.Popen[bytes]]:
    """The one way a test runs a server process: `command` from the repository root with `env`, its
    output in `log`; the block starts once `ready()` holds (`listens`, `answers`), and fails with the
    log's end if the process exits first. On exit SIGTERM, then SIGKILL after `stop_timeout` seconds."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:

        def up() -> bool:
            assert process.poll() is None, f"{command[0]} exited: {log.read_text(errors='replace')[-3000:]}"
            return ready()

        try:
            wait_until(up, timeout=timeout, interval=0.3, what=f"{Path(command[0]).name} {command[1:4]} to answer")
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{log.read_text(errors='replace')[-3000:]}") from None
        yield process
    finally:
        process.terminate()
        try:
            process.wait(stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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

        def check() -> bool:
            assert process.poll() is None, process.communicate()[0][-3000:]
            return done()

        wait_until(check, timeout=timeout, interval=0.5, what="the worker's work")


class PrivateRedis:
    """A redis-server of this test's own on `port` (no persistence), which the test may stop."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@contextmanager
def private_redis(port: int, workdir: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(port, workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def served(env: dict[str, str], port: int, log: Path, workers: int = 1) -> Iterator[str]:
    """scripts/serve (granian workers) on `port` with `env`; its base URL, stopped afterwards."""
    with server_process(env, port, log, workers) as (base, _):
        yield base


@contextmanager
def server_process(
    env: dict[str, str], port: int, log: Path, workers: int | None = 1
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """As `served`, with the server's process: contextarch/serve.py, the supervisor (`crash` kills it
    with everything below it). `workers` None: scripts/serve's own default count."""
    env = {**env, "PORT": str(port)}
    env.pop("WEB_WORKERS", None)
    if workers is not None:
        env["WEB_WORKERS"] = str(workers)
    command = [str(ROOT / "scripts" / "serve")]
    with serving(command, env=env, log=log, ready=lambda: listens(port), timeout=120, stop_timeout=60) as server:
        yield f"http://127.0.0.1:{port}", server


def descendants(pid: int) -> list[int]:
    """The process ids below `pid` (children first), read from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, queue = [], [pid]
    while queue:
        children = parents.get(queue.pop(0), [])
        found.extend(children)
        queue.extend(children)
    return found


def crash(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a server and every process below it (granian runs its workers in a session of their own)."""
    for pid in [process.pid, *descendants(process.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(30)


def children(pid: int) -> list[int]:
    """The pids of the live processes whose parent is `pid` (from /proc), oldest first."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (command) "
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append((int(fields[19]), int(entry.name)))  # start time, pid
    return [child for _, child in sorted(found)]


def manage(env: dict[str, str], *args: str) -> str:
    """`manage.py *args` in a subprocess with `env`; its stdout (fails the test on an error)."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def http_json(
    method: str, url: str, body: object = None, headers: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str], Any]:
    """One HTTP request with a JSON body: (status, headers with lower-case names, decoded JSON body)."""

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, method=method, data=data, headers={"Content-Type": "application/json"})
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw, status, got = response.read(), response.status, response.headers
    except urllib.error.HTTPError as error:
        raw, status, got = error.read(), error.code, error.headers
    got = {name.lower(): value for name, value in got.items()}
    try:
        return status, got, json.loads(raw) if raw else None
    except ValueError:
        return status, got, raw.decode(errors="replace")
