"""`scripts/serve`: granian's (or uvicorn's) worker processes, with this process holding the embedded PostgreSQL.

pgserver stops the embedded server when the last process holding a handle on it exits, and
releases a handle in atexit. The server stops its workers with SIGTERM, which ends a Python process
without atexit, so workers holding handles would leave the server running. When DATABASE_URL is
unset, this parent process takes the handle instead, gives the workers a DATABASE_URL for the
server, and lets go when the server has exited: Ctrl-C stops the workers and then the database.
While serving it watches the server every second and restarts it if it died (crash recovery
keeps every committed write); the workers answer 503 `database_unavailable` until it is back.

The ASGI server runs under contextarch/supervise.py (started again if it dies; its master restarts
a dead worker), with one worker per CPU unless WEB_WORKERS says otherwise.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from contextarch.supervise import Supervisor

WATCH_SECONDS = 1.0


def _pgdata(env: dict[str, str]) -> Path:
    return Path(env.get("CONTEXTARCH_VAR_DIR") or Path(__file__).resolve().parent.parent / "var") / "pgdata"


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    if not env.get("DATABASE_URL"):
        from apps.core.database_url import url_from_database
        from contextarch.embedded_db import embedded_database

        env["DATABASE_URL"] = url_from_database(embedded_database(_pgdata(env)))
    return env


def _keep_database_running(pgdata: Path, stop: threading.Event) -> None:
    """Restart the embedded PostgreSQL whenever it dies (the workers fail fast meanwhile: 503)."""
    from contextarch.embedded_db import embedded_alive, embedded_restart

    while not stop.wait(WATCH_SECONDS):
        if embedded_alive(pgdata):
            continue
        print("serve: the embedded PostgreSQL is not running; restarting it", file=sys.stderr, flush=True)
        try:
            if embedded_restart(pgdata):
                print("serve: the embedded PostgreSQL runs again", file=sys.stderr, flush=True)
        except Exception as exc:  # noqa: BLE001 - keep watching; the next tick tries again
            print(f"serve: restarting the embedded PostgreSQL failed: {exc}", file=sys.stderr, flush=True)


SERVERS = {  # each ASGI server's command line around its own arguments
    "uvicorn": (["-m", "uvicorn", "contextarch.asgi:application"], []),
    "granian": (["-m", "granian"], ["contextarch.asgi:application"]),
}


def worker_count(env: Mapping[str, str]) -> int:
    """WEB_WORKERS, else one worker per CPU this process may run on. Not `nproc`: it obeys
    OMP_NUM_THREADS, which scripts/serve sets to 1 for the workers' numeric libraries."""
    value = env.get("WEB_WORKERS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise SystemExit(f"serve: WEB_WORKERS must be a positive whole number, not {value!r}")
        return int(value)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


def main(args: list[str]) -> int:
    """Run the ASGI server named by args[0] (uvicorn, the default, or granian) with the other `args`
    and `--workers` (worker_count), under the supervisor (contextarch/supervise.py): restarted when
    it dies; SIGINT and SIGTERM stop it."""
    embedded = not os.environ.get("DATABASE_URL")
    name, server_args = (args[0], args[1:]) if args and args[0] in SERVERS else ("uvicorn", args)
    before, after = SERVERS[name]
    workers = worker_count(os.environ)
    print(f"serve: {name} with {workers} worker{'s' if workers > 1 else ''}", file=sys.stderr, flush=True)
    supervisor = Supervisor([sys.executable, *before, *server_args, "--workers", str(workers), *after], _worker_env())

    def stop(signum: int, frame: FrameType | None) -> None:
        supervisor.stop(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    halt = threading.Event()
    if embedded:  # this process owns the embedded server: it brings it back when it dies
        threading.Thread(target=_keep_database_running, args=(_pgdata(dict(os.environ)), halt), daemon=True).start()
    try:
        return supervisor.run()
    finally:
        halt.set()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
