"""The suite on several pytest-xdist workers (`pytest -n 2`, what `make test` runs): what each worker
keeps to itself and which tests must share one worker.

Each worker has its own test database (pytest-django adds `_gw0`, `_gw1` to its name) on the one
embedded PostgreSQL, its own slice of the live-server ports, and its own var/ directory
(`var/xdist/gw0`): the rate-limit counters file, the periodic tasks' lock and whatever else the
service keeps under var/ are then per worker, for the test process and for every server it starts
(they inherit CONTEXTARCH_VAR_DIR). That directory links to the shared PostgreSQL data, secret key
and tokenizer files. Tests of one file run on one worker (a file's module fixtures start once), and
files that share something outside their own test database run on one worker too (`group_of`).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

# Files whose tests use a fixed database of the shared Redis on 127.0.0.1:6379 (a Celery broker that
# is flushed, cache and counter keys under fixed prefixes): one worker runs them all, one at a time.
REDIS_GROUP = "redis-6379"
# Files that load the LoCoMo chat: its vectors are kept per process (tests/web/locomo_chat.py), so
# only the first chat of a worker waits minutes for the embedder.
LOCOMO_GROUP = "locomo-chat"


def worker() -> str | None:
    """This process's xdist worker id (`gw0`), or None outside xdist (or in its controller)."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def worker_ports(ports: range) -> range:
    """This worker's equal slice of `ports` (all of them outside xdist)."""
    name, count = worker(), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if name is None or count <= 1:
        return ports
    width = len(ports) // count
    start = ports.start + int(name.removeprefix("gw")) * width
    return range(start, start + width)


def group_of(module: ModuleType, path: str) -> str:
    """The xdist group of a test file's tests (`--dist loadgroup`): a shared group, else the file."""
    names = vars(module)
    if any(isinstance(value, str) and "127.0.0.1:6379" in value for value in names.values()):
        return REDIS_GROUP
    if "CeleryBroker" in names:
        return REDIS_GROUP
    if "locomo_chat_create" in names:
        return LOCOMO_GROUP
    return path


def var_dir_of_worker(shared: Path, name: str) -> Path:
    """`shared`/xdist/`name`: the worker's var/, with links to the shared PostgreSQL data and secret key."""
    own = shared / "xdist" / name
    own.mkdir(parents=True, exist_ok=True)
    for kept in ("pgdata", "secret_key", "tiktoken"):
        link = own / kept
        if (shared / kept).exists() and not link.is_symlink():
            link.symlink_to(shared / kept)
    return own
