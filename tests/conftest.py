"""Shared fixtures: workspaces with their API keys and authenticated API clients."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db import connection
from django.test.signals import setting_changed
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core import background, cache
from apps.layers.models import Layer
from apps.workspaces.models import Scope, Workspace
from apps.workspaces.services import api_key_create, workspace_create
from tests.workers import group_of, var_dir_of_worker, worker


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
    if name is not None:  # an xdist worker: a var/ of its own, for it and the servers it starts (tests/workers.py)
        own = var_dir_of_worker(Path(settings.VAR_DIR), name)
        settings.VAR_DIR = own
        os.environ["CONTEXTARCH_VAR_DIR"] = str(own)
        for alias in ("ratelimit", "ratelimit-failures"):
            if settings.CACHES[alias]["BACKEND"] == "apps.core.shared_counters.SharedCounterCache":
                settings.CACHES[alias] = {**settings.CACHES[alias], "LOCATION": str(own / "ratelimit" / "counters.bin")}
        setting_changed.send(sender=None, setting="CACHES", value=settings.CACHES, enter=True)  # new cache handlers


# A test is `slow` when it starts a process or a browser: `pytest -m "not slow"` is the quick loop.
SLOW_MARKERS = frozenset({"browser", "server"})
SLOW_FIXTURES = frozenset({"uvicorn_live", "browser", "live_server"})
# Names a module imports when its tests spawn processes (a server, a worker, a Redis, node, a CLI).
SLOW_MODULE_NAMES = frozenset(
    {"subprocess", "Popen", "server_process", "served", "private_redis", "CeleryBroker", "manage", "uvicorn_server"}
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


@dataclass
class Tenant:
    """A workspace, its company root, its API key secret and a client that sends it."""

    workspace: Workspace
    root: Layer
    secret: str
    client: APIClient


def make_tenant(slug: str) -> Tenant:
    workspace, created = workspace_create(slug=slug)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    root = Layer.objects.get(workspace=workspace, kind="company")
    return Tenant(workspace=workspace, root=root, secret=created.secret, client=client)


def admin_client(tenant: Tenant) -> APIClient:
    """A client with a new read+write+admin key of the tenant's workspace (key management needs `admin`)."""
    created = api_key_create(workspace=tenant.workspace, name="admin", scopes=list(Scope.values))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    return client


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """In-process background work ends and queued assembly records are written before the test's
    database is flushed (a TRUNCATE racing a background insert deadlocks: seen once in CI after
    test_eval_locomo, whose summaries and communities run in the background)."""
    from apps.assembly.services import records_flush
    from apps.core import background

    background.wait_idle()
    records_flush()


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """Every test starts with empty rate-limit counters: all test clients share one address."""
    cache.counters_clear()


@pytest.fixture
def one_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pins the rate limiter's clock 1 s into a window, so a burst never straddles two windows."""
    monkeypatch.setattr("apps.core.ratelimit.clock", lambda: 1_800_000_001.0)  # a multiple of 60 and 300, + 1


@pytest.fixture
def tenant(db: None) -> Tenant:
    return make_tenant("acme")


@pytest.fixture
def other_tenant(db: None) -> Tenant:
    return make_tenant("globex")


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def wait_background():
    """Waits for in-process background work (embeddings) to finish."""

    def wait() -> None:
        assert background.wait_idle(120), "background work did not finish"

    return wait


@pytest.fixture
def max_statements() -> Callable[[int], AbstractContextManager[CaptureQueriesContext]]:
    """Like pytest-django's django_assert_max_num_queries, but SAVEPOINT and RELEASE are not counted:
    a test's transaction adds a pair around each part of an assembly that may fail on its own
    (apps/core/isolation.py); a request outside a transaction sends none."""

    @contextmanager
    def check(limit: int) -> Iterator[CaptureQueriesContext]:
        with CaptureQueriesContext(connection) as captured:
            yield captured
        statements = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"][:20]]
        assert len(statements) <= limit, f"{len(statements)} statements, at most {limit}:\n" + "\n".join(statements)

    return check
