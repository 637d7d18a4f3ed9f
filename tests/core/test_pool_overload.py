"""Every pooled connection busy is an overload, not an outage (issue 26 finding 2): the request that
cannot get one answers 503 `overloaded` with Retry-After, the log says "overloaded", and the
database is not marked down. (A server that is really gone is still `database_unavailable`:
tests/server/test_database_loss.py kills PostgreSQL under scripts/serve.)"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections
from psycopg_pool import PoolTimeout

from apps.core import db_health
from tests.support.tenants import make_tenant


def _in_another_thread(fn: Callable[[], Any]) -> Any:
    """`fn()` on a thread of its own, so its database connection comes from the pool."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["answer"] = fn()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return box["answer"]


@pytest.fixture
def overload_log_due(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next overload is logged (one line per OVERLOAD_LOG_SECONDS: an earlier test may have had it)."""
    monkeypatch.setattr(db_health, "_next_overload_log", 0.0)


def test_a_request_that_finds_every_pooled_connection_busy_is_told_overloaded_and_when_to_retry(
    transactional_db: None, overload_log_due: None, caplog: pytest.LogCaptureFixture
) -> None:
    tenant = make_tenant("busy")
    pool: Any = connection.pool
    held = []
    try:
        while True:
            try:
                held.append(pool.getconn(timeout=1.0))
            except PoolTimeout:
                break
        assert pool.get_stats()["pool_size"] == pool.max_size
        with caplog.at_level(logging.WARNING):
            answer = _in_another_thread(lambda: tenant.client.get("/api/v1/layers/"))
    finally:
        for conn in held:
            pool.putconn(conn)

    assert answer.status_code == 503, answer.content
    assert answer.json()["error"]["code"] == "overloaded"
    assert int(answer["Retry-After"]) >= 1
    assert "overloaded" in caplog.text
    assert "PostgreSQL is unavailable" not in caplog.text
    assert not db_health.database_down()
    again = _in_another_thread(lambda: tenant.client.get("/api/v1/layers/"))
    assert again.status_code == 200, again.content
