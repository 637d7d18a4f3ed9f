"""CPU time of process trees from /proc: the server's workers and PostgreSQL's backends.

A process's own utime + stime, plus cutime + cstime (its reaped children: PostgreSQL backends
that exited during the run land in the postmaster's), plus its live descendants'. Linux only;
elsewhere every figure is None. Redis (shared by everyone on the machine) is not counted.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.db import connection

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # fields from 3 (state) on; the name may hold spaces


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds used so far by `pid`, its reaped children and its live descendants."""
    fields = _stat(pid)
    if fields is None:
        return None
    total = sum(int(x) for x in fields[11:15]) / _TICKS  # utime stime cutime cstime
    for child in _children(pid):
        total += tree_cpu_seconds(child) or 0.0
    return total


def postgres_pid() -> int | None:
    """The postmaster of this process's database when it runs on this machine, else None."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = int(cur.fetchone()[0])
    fields = _stat(backend)
    return int(fields[1]) if fields else None  # field 4: the parent, the postmaster


def process_cpu_seconds() -> float:
    """This process's CPU seconds, all threads."""
    times = os.times()
    return times.user + times.system
