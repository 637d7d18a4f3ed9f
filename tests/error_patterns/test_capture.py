"""A failure, then a success of the same agent type in the same session and group, captures."""

from __future__ import annotations

import pytest
from django.conf import settings

from apps.error_patterns.models import Attempt, ErrorPattern
from apps.layers.models import Layer
from tests.error_patterns.attempts import make_session, report
from tests.support.tenants import Tenant

ERROR = 'psycopg.errors.UndefinedTable: relation "orders" does not exist\nLINE 1: SELECT * FROM "orders" WHERE id = 42'
FIX = "Run manage.py migrate before the tests."


def test_it_captures_a_pattern_when_a_failure_is_followed_by_a_success(tenant: Tenant, session: Layer) -> None:
    failed = report(tenant, session, "failed", error=ERROR, iteration=1)
    assert failed["captured"] is None
    done = report(tenant, session, "succeeded", solution=FIX, iteration=2)
    pattern = done["captured"]
    assert done["new_pattern"] is True
    assert pattern["signature"].startswith("psycopg.errors.undefinedtable: relation <str> does not exist")
    assert pattern["solution"] == FIX
    assert pattern["occurrences"] == 1
    assert pattern["confidence"] == pytest.approx(settings.ERROR_PATTERN_INITIAL_CONFIDENCE)
    assert "orders" in pattern["error_excerpt"]
    assert done["pattern"] == pattern["id"]


def test_it_captures_nothing_from_a_success_alone(tenant: Tenant, session: Layer) -> None:
    done = report(tenant, session, "succeeded", solution=FIX)
    assert done["captured"] is None
    assert not ErrorPattern.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("group_id", "another-group"), ("agent_type", "qa")],
)
def test_it_captures_nothing_across_groups_or_agent_types(
    tenant: Tenant, session: Layer, field: str, value: str
) -> None:
    report(tenant, session, "failed", error=ERROR)
    done = report(tenant, session, "succeeded", solution=FIX, **{field: value})
    assert done["captured"] is None
    assert not ErrorPattern.objects.exists()


def test_it_captures_nothing_across_sessions(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error=ERROR)
    done = report(tenant, make_session(tenant, "sess-2"), "succeeded", solution=FIX)
    assert done["captured"] is None


def test_a_success_claims_its_failures_once(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error=ERROR)
    assert report(tenant, session, "succeeded", solution=FIX)["captured"] is not None
    assert report(tenant, session, "succeeded", solution=FIX)["captured"] is None
    assert ErrorPattern.objects.get().occurrences == 1


def test_the_last_failure_before_the_success_is_the_one_captured(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error="TimeoutError: read timed out after 30s")
    report(tenant, session, "failed", error=ERROR)
    pattern = report(tenant, session, "succeeded", solution=FIX)["captured"]
    assert "undefinedtable" in pattern["signature"]
    assert ErrorPattern.objects.count() == 1


def test_a_new_occurrence_of_a_known_signature_raises_its_confidence(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error=ERROR)
    first = report(tenant, session, "succeeded", solution=FIX)["captured"]
    other = make_session(tenant, "sess-2")
    report(tenant, other, "failed", error=ERROR.replace("orders", "invoices").replace("42", "7"))
    second = report(tenant, other, "succeeded", solution="Apply the migrations: manage.py migrate")
    assert second["new_pattern"] is False
    assert second["captured"]["id"] == first["id"]
    assert second["captured"]["occurrences"] == 2
    assert second["captured"]["confidence"] > first["confidence"]
    assert second["captured"]["solution"] == "Apply the migrations: manage.py migrate"


def test_an_attempt_needs_a_session_layer_of_the_workspace(
    tenant: Tenant, other_tenant: Tenant, session: Layer
) -> None:
    post = tenant.client.post
    root = post("/api/v1/attempts/", {"layer": tenant.root.pk, "outcome": "failed"}, format="json")
    assert root.status_code == 400 and root.json()["error"]["code"] == "invalid_layer"
    foreign = other_tenant.client.post("/api/v1/attempts/", {"layer": session.pk, "outcome": "failed"}, format="json")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "layer_not_found"
    missing = post("/api/v1/attempts/", {"outcome": "failed"}, format="json")
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "missing_layer"
    bad = post("/api/v1/attempts/", {"layer": session.pk, "outcome": "maybe"}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_outcome"
    by_external = post("/api/v1/attempts/", {"layer_external_id": "sess-1", "outcome": "failed"}, format="json")
    assert by_external.status_code == 201 and by_external.json()["layer"] == session.pk


def test_it_lists_attempts_of_a_session(tenant: Tenant, session: Layer) -> None:
    report(tenant, session, "failed", error=ERROR, iteration=1)
    report(tenant, session, "succeeded", solution=FIX, iteration=2)
    listed = tenant.client.get(f"/api/v1/attempts/?layer={session.pk}&group_id=g1").json()
    assert [a["outcome"] for a in listed["results"]] == ["succeeded", "failed"]
    assert Attempt.objects.filter(resolved=True).count() == 1
