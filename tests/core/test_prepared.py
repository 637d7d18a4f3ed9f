"""Cursors whose statements PostgreSQL keeps prepared (apps/core/prepared.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from apps.core.prepared import PREPARE_AFTER, prepared_cursor

pytestmark = pytest.mark.django_db

STATEMENT = "SELECT %s::int + 1 AS prepared_probe"


def _prepared_statements() -> list[str]:
    with connection.cursor() as cur:
        cur.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cur.fetchall()]


def test_it_prepares_a_statement_run_again_and_again() -> None:
    for n in range(PREPARE_AFTER + 1):
        with prepared_cursor(connection) as cur:
            cur.execute(STATEMENT, [n])
            assert cur.fetchone() == (n + 1,)
    assert any("prepared_probe" in statement for statement in _prepared_statements())


def test_it_is_counted_like_any_other_query(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(1) as captured, prepared_cursor(connection) as cur:
        cur.execute(STATEMENT, [1])
    assert "prepared_probe" in captured.captured_queries[0]["sql"]


def test_it_binds_on_the_client_while_an_execute_wrapper_rewrites_statements() -> None:
    seen: list[str] = []

    def prefixed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        return execute(f"SET LOCAL statement_timeout = '5s'; {sql}", params, many, context)

    with connection.execute_wrapper(prefixed), prepared_cursor(connection) as cur:
        cur.execute(STATEMENT + " -- wrapped", [1])
        cur.nextset()
        assert cur.fetchone() == (2,)
    assert seen and not any("wrapped" in statement for statement in _prepared_statements())


def test_it_prepares_nothing_when_turned_off(settings: Any) -> None:
    settings.DB_PREPARED_STATEMENTS = False
    for n in range(PREPARE_AFTER + 2):
        with prepared_cursor(connection) as cur:
            cur.execute(STATEMENT + " -- off", [n])
            assert cur.fetchone() == (n + 1,)
    assert not any("off" in statement for statement in _prepared_statements())


def test_a_prepared_statement_is_logged_with_its_sql(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(PREPARE_AFTER + 2) as captured:
        for n in range(PREPARE_AFTER + 2):
            with prepared_cursor(connection) as cur:
                cur.execute(STATEMENT + " -- logged", [n])
                assert cur.fetchone() == (n + 1,)
    assert all("prepared_probe" in (q["sql"] or "") for q in captured.captured_queries)
    assert any("logged" in statement for statement in _prepared_statements())  # it did run prepared
