"""The suite's hooks: test settings, the `slow` marker, xdist groups, background work drained at teardown.

Shared helpers and fixtures live in tests/support (its fixtures are registered below).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test.signals import setting_changed

from tests.support.workers import group_of, var_dir_of_worker, worker

pytest_plugins = [
    "tests.support.fixtures",
    "tests.support.browser",
    "tests.support.daphne",
    "tests.support.live",
]


def pytest_configure(config: pytest.Config) -> None:
    """Connections opened by worker threads (Channels, background) close after use under test,
    so the test database can be dropped at the end of the run."""
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Fast password hashing: a test signs in many times (the login rate-limit tests, 30 tries each).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # `contextarch.asgi` imported by a test module must not query a database before the test one exists.
    settings.EMBEDDING_CHECK_AT_START = False
    name = worker()
    if (
        name is not None
    ):  # an xdist worker: a var/ of its own, for it and the servers it starts (tests/support/workers.py)
        own = var_dir_of_worker(Path(settings.VAR_DIR), name)
        settings.VAR_DIR = own
        os.environ["CONTEXTARCH_VAR_DIR"] = str(own)
        for alias in ("ratelimit", "ratelimit-failures"):
            if settings.CACHES[alias]["BACKEND"] == "apps.core.shared_counters.SharedCounterCache":
                settings.CACHES[alias] = {**settings.CACHES[alias], "LOCATION": str(own / "ratelimit" / "counters.bin")}
        setting_changed.send(sender=None, setting="CACHES", value=settings.CACHES, enter=True)  # new cache handlers


# A test is `slow` when it starts a process or a browser: `pytest -m "not slow"` is the quick loop.
SLOW_MARKERS = frozenset({"browser", "server"})
SLOW_FIXTURES = frozenset({"uvicorn_live", "browser", "live_server", "daphne"})
# Names a module imports when its tests spawn processes (a server, a worker, a Redis, node, a CLI).
SLOW_MODULE_NAMES = frozenset(
    {
        "subprocess",
        "Popen",
        "serving",
        "server_process",
        "served",
        "private_redis",
        "CeleryBroker",
        "manage",
        "uvicorn_server",
    }
)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if worker() is not None and module is not None:
            item.add_marker(pytest.mark.xdist_group(group_of(module, item.nodeid.split("::")[0])))
        spawns = module is not None and not SLOW_MODULE_NAMES.isdisjoint(vars(module))
        marked = not SLOW_MARKERS.isdisjoint(m.name for m in item.iter_markers())
        fixtures = set(getattr(item, "fixturenames", ()))
        if spawns or marked or not SLOW_FIXTURES.isdisjoint(fixtures):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """In-process background work ends and queued assembly records are written before the test's
    database is flushed (a TRUNCATE racing a background insert deadlocks: seen once in CI after
    test_eval_locomo, whose summaries and communities run in the background)."""
    from apps.assembly.services import records_flush
    from apps.core import background

    background.wait_idle()
    records_flush()
