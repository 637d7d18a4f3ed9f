"""scripts/serve supervises its server: a worker killed with SIGKILL is replaced, the whole server
killed is restarted, and the embedded PostgreSQL stays up throughout; by default one worker per CPU.

`kill -9` of one granian worker used to stop every worker (respawn was off), then `make run` and
the embedded database with them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from contextarch import supervise
from contextarch.serve import worker_count
from tests.support.processes import children, database_url, free_port, http_json, manage, server_process
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server

STARTED = re.compile(r"Started worker-\d+$", re.M)  # granian's line once a worker has loaded the app


def _postmaster(var_dir: Path) -> int:
    pid = int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
    os.kill(pid, 0)  # alive (raises otherwise)
    return pid


def _asgi_server(server: subprocess.Popen[bytes]) -> int:
    """The ASGI server's main process, the supervisor's one child."""
    (pid,) = wait_until(lambda: children(server.pid), timeout=30, what="the server process")
    return pid


def _workers(server: subprocess.Popen[bytes], count: int) -> list[int]:
    main = _asgi_server(server)
    return wait_until(lambda: len(found := children(main)) == count and found, timeout=60, what=f"{count} workers")


def _answers_again(base: str, auth: dict[str, str], since: float) -> float:
    """Seconds from `since` until three requests in a row that need a worker and the database answered 200."""
    streak = 0

    def ok() -> bool:
        nonlocal streak
        try:
            status = http_json("GET", f"{base}/api/v1/layers/", headers=auth, timeout=5)[0]
        except OSError:  # refused or reset while no worker listens
            status = 0
        streak = streak + 1 if status == 200 else 0
        return streak >= 3

    wait_until(ok, timeout=60, interval=0.2, what="the server to answer again")
    return time.monotonic() - since


def test_a_killed_worker_or_server_comes_back_and_the_embedded_database_stays_up(var_dir: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(CONTEXTARCH_VAR_DIR=str(var_dir), OMP_NUM_THREADS="1")
    manage(env, "migrate", "--noinput")
    key = manage(env, "create_workspace", "crash").strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {key}"}
    log = var_dir.parent / "serve.log"
    with server_process(env, free_port(), log, workers=2) as (base, server):
        _answers_again(base, auth, time.monotonic())
        postmaster = _postmaster(var_dir)
        first, second = _workers(server, 2)

        killed = time.monotonic()
        os.kill(first, signal.SIGKILL)
        main = _asgi_server(server)
        wait_until(lambda: first not in (now := children(main)) and len(now) == 2, timeout=60, what="a new worker")
        one = _answers_again(base, auth, killed)  # the other worker answers meanwhile
        wait_until(lambda: len(STARTED.findall(log.read_text())) == 3, timeout=90, what="the new worker to load")
        killed = time.monotonic()
        os.kill(second, signal.SIGKILL)  # the other one as well: the replacement answers meanwhile
        other = _answers_again(base, auth, killed)
        assert one < 30 and other < 30, f"answered again after {one:.1f}s and {other:.1f}s"
        print(f"\nanswering again {one:.1f}s and {other:.1f}s after a worker was killed")
        assert _postmaster(var_dir) == postmaster

        asgi = _asgi_server(server)
        killed = time.monotonic()
        os.kill(asgi, signal.SIGKILL)  # the server's main process: the supervisor starts a new server
        wait_until(lambda: children(server.pid) not in ([], [asgi]), timeout=60, what="a new server")
        _workers(server, 2)
        took = _answers_again(base, auth, killed)
        assert took < 60, f"answered again after {took:.1f}s"
        assert _postmaster(var_dir) == postmaster
        assert server.poll() is None
    text = log.read_text()
    assert "restarting" in text and "Respawning worker" in text, text[-3000:]
    print(f"\nanswering again {took:.1f}s after the server was killed")


@pytest.mark.django_db(transaction=True)
def test_it_starts_one_worker_per_cpu_even_with_omp_num_threads_1(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "OMP_NUM_THREADS": "1"}
    cpus = len(os.sched_getaffinity(0))
    with server_process(env, free_port(), tmp_path / "serve.log", workers=None) as (_, server):
        assert len(_workers(server, cpus)) == cpus  # `nproc` obeyed OMP_NUM_THREADS=1: one worker
        time.sleep(2)
        assert len(children(_asgi_server(server))) == cpus


def test_the_worker_count_is_web_workers_or_the_cpus_this_process_may_use() -> None:
    assert worker_count({"WEB_WORKERS": "3", "OMP_NUM_THREADS": "1"}) == 3
    assert worker_count({"OMP_NUM_THREADS": "1"}) == len(os.sched_getaffinity(0))
    with pytest.raises(SystemExit, match="WEB_WORKERS must be a positive whole number"):
        worker_count({"WEB_WORKERS": "0"})


def test_a_server_that_keeps_dying_young_is_given_up_on_with_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(supervise, "BACKOFF_SECONDS", (0.0,))
    starts = tmp_path / "starts"
    command = [sys.executable, "-c", f"open({str(starts)!r}, 'a').write('x'); raise SystemExit(3)"]
    assert supervise.Supervisor(command, dict(os.environ)).run() == 3
    assert starts.read_text() == "x" * supervise.RESTART_GIVE_UP
    assert "restarting it" in capsys.readouterr().err
