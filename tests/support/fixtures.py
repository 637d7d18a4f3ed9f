"""The fixtures every test may ask for (registered by `pytest_plugins` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.core import background, cache
from tests.support.tenants import Tenant, make_tenant


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
def wait_background() -> Callable[[], None]:
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
