"""`scripts/serve`: uvicorn's worker processes, with this process holding the embedded PostgreSQL.

pgserver stops the embedded server when the last process holding a handle on it exits, and
releases a handle in atexit. Uvicorn stops its workers with SIGTERM, which ends a Python process
without atexit, so workers holding handles would leave the server running. When DATABASE_URL is
unset, this parent process takes the handle instead, gives the workers a DATABASE_URL for the
server, and lets go when uvicorn has exited: Ctrl-C stops the workers and then the database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    if not env.get("DATABASE_URL"):
        from contextarch.embedded_db import embedded_database, url_from_database

        var_dir = Path(env.get("CONTEXTARCH_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
        env["DATABASE_URL"] = url_from_database(embedded_database(var_dir / "pgdata"))
    return env


def main(uvicorn_args: list[str]) -> int:
    """Run uvicorn with `uvicorn_args` in its own session; forward SIGINT and SIGTERM to it."""
    child = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "contextarch.asgi:application", *uvicorn_args],
        env=_worker_env(),
        start_new_session=True,  # a terminal's Ctrl-C reaches uvicorn once, through this process
    )

    def forward(signum: int, frame: FrameType | None) -> None:
        child.send_signal(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
