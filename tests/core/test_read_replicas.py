"""Read replicas: context assembly, the history search and the content pages read from a real
streaming replica of the embedded PostgreSQL once it has replayed the workspace's last change, else
from the primary; a lagging replica (replay paused) or a lost one never costs a request its writes
or an error."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from apps.core.database_url import replica_database
from apps.core.replicas import replica_for, replicas_reset
from apps.metrics.registry import REPLICA_READS
from tests.support.replica_server import Standby, streaming_replica
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

ALIAS = "replica_test"
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, databases=["default", ALIAS])]


@pytest.fixture(scope="module", autouse=True)
def standby(django_db_setup: None, django_db_blocker: Any) -> Iterator[Standby]:
    """A streaming replica of the test database, known as `replica_test` (before the tests' database
    checks list their aliases), but not configured as a replica until a test asks for `replica`."""
    with django_db_blocker.unblock(), streaming_replica(connections["default"].settings_dict) as running:
        primary = connections["default"].settings_dict
        connections.settings[ALIAS] = replica_database(primary, running.entry(primary), pool_timeout=0.2)
        try:
            yield running
        finally:
            connections[ALIAS].close()
            connections[ALIAS].close_pool()
            del connections[ALIAS]
            del connections.settings[ALIAS]


@pytest.fixture
def replica(standby: Standby) -> Iterator[Standby]:
    """The standby as the configured replica, replaying (started again and resumed after each test)."""
    try:
        with override_settings(DATABASE_REPLICAS=[ALIAS], REPLICA_RETRY_SECONDS=5.0):
            yield standby
    finally:
        connections[ALIAS].close()
        if not standby.running():  # a test stopped it
            standby.start()
        if standby.sql("SELECT pg_is_wal_replay_paused()"):
            standby.sql("SELECT pg_wal_replay_resume()")
        replicas_reset()


def _remember(tenant: Tenant, content: str) -> None:
    answer = tenant.client.post(
        "/api/v1/items/bulk/",
        {"layer": tenant.root.pk, "items": [{"kind": "memory", "type": "fact", "content": content}]},
        format="json",
    )
    assert answer.status_code == 201, answer.content


def _context(tenant: Tenant, query: str) -> dict[str, Any]:
    answer = tenant.client.post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query": query, "token_budget": 500, "timeout_ms": 0},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    return dict(answer.json())


def _caught_up(tenant: Tenant) -> bool:
    return replica_for(workspace_id=tenant.workspace.pk) == ALIAS


def _searched_on(queries: CaptureQueriesContext) -> bool:
    return any("layers_itemsearch" in q["sql"] for q in queries.captured_queries)


def test_it_reads_a_caught_up_replica_and_writes_the_primary(tenant: Tenant, replica: Standby) -> None:
    word = f"quokka{uuid.uuid4().hex[:8]}"
    _remember(tenant, f"The {word} ledger is reconciled every Friday.")
    wait_until(lambda: _caught_up(tenant), timeout=10, what="the replica to replay the write")
    with CaptureQueriesContext(connections[ALIAS]) as on_replica:
        answer = _context(tenant, f"When is the {word} ledger reconciled?")
        history = tenant.client.get("/api/v1/history/", {"query": f"{word} ledger"})
    assert any(word in chunk["text"] for chunk in answer["chunks"])
    assert _searched_on(on_replica), "the keyword search did not run on the replica"
    assert not any(q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")) for q in on_replica)
    assert history.status_code == 200, history.content


def test_a_lagging_replica_leaves_the_request_on_the_primary_with_its_writes(tenant: Tenant, replica: Standby) -> None:
    _remember(tenant, "Warm-up fact so the workspace has a version.")
    wait_until(lambda: _caught_up(tenant), timeout=10, what="the replica to catch up")
    replica.sql("SELECT pg_wal_replay_pause()")
    wait_until(lambda: replica.sql("SELECT pg_get_wal_replay_pause_state()") == "paused", timeout=10)
    word = f"narwhal{uuid.uuid4().hex[:8]}"
    _remember(tenant, f"The {word} cluster fails over to the standby region.")
    behind = REPLICA_READS.labels(result="replica_behind")._value.get()
    with CaptureQueriesContext(connections[ALIAS]) as on_replica:
        answer = _context(tenant, f"Where does the {word} cluster fail over?")
    assert any(word in chunk["text"] for chunk in answer["chunks"]), "the request did not see its own write"
    assert not _searched_on(on_replica)
    assert REPLICA_READS.labels(result="replica_behind")._value.get() > behind
    replica.sql("SELECT pg_wal_replay_resume()")
    wait_until(lambda: _caught_up(tenant), timeout=10, what="the replica to catch up after resuming")
    with CaptureQueriesContext(connections[ALIAS]) as on_replica:
        again = _context(tenant, f"Which region does the {word} cluster fail over to?")
    assert any(word in chunk["text"] for chunk in again["chunks"]) and _searched_on(on_replica)


def test_a_lost_replica_costs_no_error(tenant: Tenant, replica: Standby) -> None:
    word = f"axolotl{uuid.uuid4().hex[:8]}"
    _remember(tenant, f"The {word} service rotates its certificates monthly.")
    wait_until(lambda: _caught_up(tenant), timeout=10, what="the replica to replay the write")
    replica.stop()
    down = REPLICA_READS.labels(result="replica_down")._value.get()
    started = time.perf_counter()
    first = _context(tenant, f"How often does the {word} service rotate certificates?")
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    second = _context(tenant, f"What does the {word} service rotate monthly?")
    second_s = time.perf_counter() - started
    assert any(word in chunk["text"] for chunk in first["chunks"])
    assert not [w for w in first["warnings"] if w.startswith(("search_failed", "candidates_failed"))]
    assert any(word in chunk["text"] for chunk in second["chunks"])
    # asked once, then skipped for REPLICA_RETRY_SECONDS
    assert REPLICA_READS.labels(result="replica_down")._value.get() == down + 1, (first_s, second_s)
    assert tenant.client.get("/readyz").status_code == 200


def test_it_reads_the_primary_without_replicas(tenant: Tenant) -> None:
    assert replica_for(workspace_id=tenant.workspace.pk) == "default"


def test_a_replica_entry_keeps_the_primary_options_with_a_short_pool_wait() -> None:
    primary = {"NAME": "p", "HOST": "h", "OPTIONS": {"pool": {"timeout": 0.5, "max_size": 16}, "options": "-c x=1"}}
    entry = replica_database(
        primary, {"NAME": "r", "USER": "u", "PASSWORD": "", "HOST": "rh", "PORT": "5"}, pool_timeout=0.2
    )
    assert entry["HOST"] == "rh" and entry["OPTIONS"]["options"] == "-c x=1"
    assert entry["OPTIONS"]["pool"] == {"timeout": 0.2, "max_size": 16} and primary["OPTIONS"]["pool"]["timeout"] == 0.5
    assert entry["TEST"] == {"MIRROR": "default"}
