"""Matching patterns above 0.7 become solution hints in the assembled context."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.error_patterns.models import ErrorPattern, HintInjection
from apps.layers.models import Layer
from tests.conftest import Tenant
from tests.error_patterns.conftest import report

ERROR = 'psycopg.errors.UndefinedTable: relation "orders" does not exist'
SIGNATURE = "psycopg.errors.undefinedtable: relation <str> does not exist"


def pattern(tenant: Tenant, *, confidence: float, solution: str, signature: str = SIGNATURE) -> ErrorPattern:
    now = timezone.now()
    return ErrorPattern.objects.create(
        workspace=tenant.workspace,
        signature=signature,
        error_excerpt=ERROR,
        solution=solution,
        confidence=confidence,
        first_seen=now,
        last_seen=now,
    )


def context(tenant: Tenant, layer: Layer, **body: Any) -> dict[str, Any]:
    # timeout_ms=0: wait for the whole context, so a loaded test machine cannot skip the hints at the deadline.
    payload = {
        "layer": layer.pk,
        "query": "deploy",
        "agent_type": "developer",
        "group_id": "g1",
        "timeout_ms": 0,
        **body,
    }
    response = tenant.client.post("/api/v1/context/", payload, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def hints(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["chunks"] if c["source"] == "error_hint"]


@pytest.fixture
def fact(tenant: Tenant, session: Layer) -> None:
    items = [{"kind": "memory", "type": "fact", "content": "Deploys run the migrations first."}]
    assert (
        tenant.client.post("/api/v1/items/bulk/", {"layer": session.pk, "items": items}, format="json").status_code
        == 201
    )


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
