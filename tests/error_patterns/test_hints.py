"""Matching patterns above 0.7 become solution hints in the assembled context."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.assembly.models import AssemblyRecord
from apps.error_patterns.models import HintInjection
from apps.error_patterns.selectors import patterns_match
from apps.error_patterns.services import hints_injected
from apps.layers.models import Layer
from apps.metrics.registry import REGISTRY
from tests.error_patterns.attempts import ERROR, SIGNATURE, context, hints, pattern, report
from tests.support.tenants import Tenant


@pytest.mark.usefixtures("fact")
def test_a_pattern_above_the_threshold_is_injected_first_and_one_below_is_not(tenant: Tenant, session: Layer) -> None:
    pattern(tenant, confidence=0.71, solution="Run manage.py migrate.")
    pattern(tenant, confidence=0.69, solution="Drop the database.", signature=SIGNATURE + " at all")
    body = context(tenant, session, error=ERROR.replace("orders", "users"))
    assert body["chunks"][0]["source"] == "error_hint"
    assert any("manage.py migrate" in h["text"] for h in hints(body))
    assert not any("Drop the database" in c["text"] for c in body["chunks"])


@pytest.mark.usefixtures("fact")
def test_a_pattern_at_exactly_the_threshold_is_not_injected(tenant: Tenant, session: Layer) -> None:
    pattern(tenant, confidence=0.7, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error=ERROR)) == []


@pytest.mark.usefixtures("fact")
def test_an_unrelated_error_gets_no_hint(tenant: Tenant, session: Layer) -> None:
    pattern(tenant, confidence=0.9, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error="ZeroDivisionError: division by zero")) == []
    assert hints(context(tenant, session)) == []


@pytest.mark.usefixtures("fact")
def test_the_sessions_last_failed_attempt_brings_its_hints(tenant: Tenant, session: Layer) -> None:
    pattern(tenant, confidence=0.9, solution="Run manage.py migrate.")
    assert hints(context(tenant, session)) == []
    report(tenant, session, "failed", error=ERROR)
    assert [h["id"] for h in hints(context(tenant, session))]
    report(tenant, session, "succeeded", solution="Ran the migrations.")
    assert hints(context(tenant, session)) == []


@pytest.mark.usefixtures("fact")
def test_fail_then_succeed_then_the_same_error_elsewhere_gets_the_captured_fix(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error=ERROR)
    report(tenant, session, "succeeded", solution="Run manage.py migrate before the tests.")
    body = context(tenant, session, error=ERROR.replace("orders", "invoices"), group_id="g2")
    assert body["chunks"][0]["source"] == "error_hint"
    assert "manage.py migrate" in body["chunks"][0]["text"]


@pytest.mark.usefixtures("fact")
def test_a_failure_after_an_injected_hint_lowers_its_confidence_once(tenant: Tenant, session: Layer) -> None:
    known = pattern(tenant, confidence=0.8, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error=ERROR))
    assert hints(context(tenant, session, error=ERROR, query="again"))  # a second context, one open injection
    assert HintInjection.objects.filter(pattern=known, resolved_at__isnull=True).count() == 1
    failed = report(tenant, session, "failed", error=ERROR)
    assert failed["lowered"] == [known.pk]
    known.refresh_from_db()
    assert known.confidence < 0.8 and known.failures == 1
    closed = HintInjection.objects.get(pattern=known)
    assert closed.failed is True and closed.resolved_at is not None  # the dashboard counts it at that time
    assert report(tenant, session, "failed", error=ERROR)["lowered"] == []  # no new injection since
    known.refresh_from_db()
    assert known.failures == 1
    assert hints(context(tenant, session, error=ERROR, query="third")) == []  # now below 0.7


@pytest.mark.usefixtures("fact")
def test_a_success_after_an_injected_hint_does_not_lower_it(tenant: Tenant, session: Layer) -> None:
    known = pattern(tenant, confidence=0.8, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error=ERROR))
    assert report(tenant, session, "succeeded", solution="Migrated.")["lowered"] == []
    known.refresh_from_db()
    assert known.confidence == pytest.approx(0.8)
    assert HintInjection.objects.get(pattern=known).failed is False


@pytest.mark.usefixtures("fact")
def test_a_failure_of_another_group_leaves_the_hint_alone(tenant: Tenant, session: Layer) -> None:
    known = pattern(tenant, confidence=0.8, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error=ERROR))
    assert report(tenant, session, "failed", error=ERROR, group_id="other")["lowered"] == []
    known.refresh_from_db()
    assert known.confidence == pytest.approx(0.8)


@pytest.mark.usefixtures("fact")
def test_the_requests_error_is_redacted_before_records_traces_and_the_cache(tenant: Tenant, session: Layer) -> None:
    secret = "sk-proj-Zq8vN3kLm2Xr7Tw9Bp4Yc6Hd1Jf5Gs0a"
    body = context(tenant, session, error=f"openai.AuthenticationError: Incorrect API key provided: {secret}")
    again = context(tenant, session, error=f"openai.AuthenticationError: Incorrect API key provided: {secret}")
    assert again["cached"] is True
    stored = [str(r.request) + str(r.trace) for r in AssemblyRecord.objects.all()]
    assert stored and not any(secret in row for row in stored)
    preview = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": session.pk, "query": "deploy", "error": f"key {secret}", "timeout_ms": 0},
        format="json",
    )
    assert preview.status_code == 200 and secret not in preview.content.decode()
    assert secret not in str(body)


def test_the_hint_source_runs_a_fixed_handful_of_queries(
    tenant: Tenant, session: Layer, django_assert_max_num_queries: Any
) -> None:
    from apps.assembly.sources.error_hints import HintQuery, hint_candidates

    for n in range(30):
        pattern(tenant, confidence=0.9, solution=f"fix {n}", signature=f"{SIGNATURE} variant {n}")
    report(tenant, session, "failed", error=ERROR)
    request = HintQuery(workspace_id=tenant.workspace.pk, layer_id=session.pk, agent_type="developer", group_id="g1")
    with django_assert_max_num_queries(3):  # the last attempt, the candidates (id, signature), the winners
        found = hint_candidates(request)
    assert len(found) == 3 and all(c.source == "error_hint" for c in found)


def test_matching_loads_full_rows_of_the_winners_only(tenant: Tenant) -> None:
    exact = pattern(tenant, confidence=0.9, solution="the exact fix")
    for n in range(30):
        pattern(tenant, confidence=0.9, solution=f"fix {n} " + "x" * 2000, signature=f"{SIGNATURE} variant {n}")
    with CaptureQueriesContext(connection) as captured:
        matches = patterns_match(
            workspace_id=tenant.workspace.pk, signature=SIGNATURE, min_confidence=0.5, threshold=0.5, limit=3
        )
    assert len(matches) == 3 and matches[0] == (1.0, exact)
    assert all(p.solution for _, p in matches)  # full rows
    assert len(captured.captured_queries) == 2
    with_solution = [q["sql"] for q in captured.captured_queries if '"solution"' in q["sql"].split(" FROM ")[0]]
    assert len(with_solution) == 1 and " IN (" in with_solution[0]  # by primary key, the 3 winners


def injected() -> float:
    return REGISTRY.get_sample_value("context_architect_error_hints_injected_total") or 0.0


def test_the_counter_counts_injections_recorded_not_hints_already_open(tenant: Tenant, session: Layer) -> None:
    first = pattern(tenant, confidence=0.9, solution="fix a")
    second = pattern(tenant, confidence=0.9, solution="fix b", signature=f"{SIGNATURE} b")
    scope = {"workspace_id": tenant.workspace.pk, "layer_id": session.pk, "agent_type": "dev", "group_id": "g"}
    assert hints_injected(**scope, pattern_ids=[first.pk]) == 1
    before = injected()
    assert hints_injected(**scope, pattern_ids=[first.pk, second.pk, second.pk]) == 1  # first is open already
    assert injected() - before == 1
    assert HintInjection.objects.filter(workspace_id=tenant.workspace.pk).count() == 2
