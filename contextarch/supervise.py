"""The supervisor of `scripts/serve`: run the ASGI server, and start it again whenever it dies.

The server's own master restarts a dead worker (granian `--respawn-failed-workers`, uvicorn by
default), so the other workers keep serving meanwhile. This covers what that does not: the master
itself killed, or granian giving up after a worker crashed twice within a few seconds. Whatever
is left of the dead server (its workers, in the process group of its own session) is stopped
before the next one binds the port. A server that keeps dying young (RESTART_GIVE_UP starts in a
row that each lasted less than HEALTHY_SECONDS: a bad argument, the port taken) is given up on,
with its exit code. SIGINT and SIGTERM go to the server and end the supervision.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

HEALTHY_SECONDS = 30.0  # a server that ran this long had started well: its death is a crash
RESTART_GIVE_UP = 5  # starts in a row that each died young
BACKOFF_SECONDS = (0.5, 1.0, 2.0, 4.0, 8.0)
LEFTOVER_SECONDS = 5.0  # how long the dead server's workers get to stop on SIGTERM before SIGKILL


def _say(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(pgid: int, grace: float = LEFTOVER_SECONDS) -> None:
    """SIGTERM to every process left in the group `pgid`, SIGKILL to those still there after `grace`."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.1)


class Supervisor:
    """Runs `command` with `env` in a session of its own until `stop()`; restarts it when it dies."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self.command = list(command)
        self.env = env
        self._stopping = threading.Event()
        self._signal = signal.SIGTERM
        self._child: subprocess.Popen[bytes] | None = None

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """End the supervision: `signum` to the running server, and no restart after it. Safe in a
        signal handler (no lock: `run` checks the flag again once a new server has started)."""
        self._signal = signal.Signals(signum)
        self._stopping.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    def run(self) -> int:
        """Serve until stopped (the server's exit code) or given up on (the last exit code)."""
        young = 0  # deaths in a row, each within HEALTHY_SECONDS of its start
        while not self._stopping.is_set():
            started = time.monotonic()
            # Its own session: a terminal's Ctrl-C reaches the server once, through stop(), and
            # its workers share a process group that stop_group() can end after a crash.
            child = self._child = subprocess.Popen(self.command, env=self.env, start_new_session=True)
            if self._stopping.is_set() and child.poll() is None:  # stopped while starting it
                child.send_signal(self._signal)
            code = child.wait()
            stop_group(child.pid)  # its workers, if it died without stopping them
            if self._stopping.is_set():
                return code
            lived = time.monotonic() - started
            young = young + 1 if lived < HEALTHY_SECONDS else 0
            if young >= RESTART_GIVE_UP:
                _say(f"the server died {young} times in a row within {HEALTHY_SECONDS:.0f}s of starting; giving up")
                return code or 1
            wait = BACKOFF_SECONDS[min(young, len(BACKOFF_SECONDS) - 1)]
            _say(f"the server exited with {code} after {lived:.1f}s; restarting it in {wait}s")
            self._stopping.wait(wait)
        return 0
