"""GET/DELETE /api/v1/error-patterns/ and POST /api/v1/error-patterns/match/, scoped to the key's workspace."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.error_patterns.models import ErrorPattern
from tests.error_patterns.attempts import make
from tests.support.tenants import Tenant


def test_it_lists_patterns_most_confident_first_with_filters(tenant: Tenant, other_tenant: Tenant) -> None:
    low = make(tenant.workspace, "timeouterror: read timed out after <n>s", 0.4)
    high = make(tenant.workspace, "modulenotfounderror: no module named <str>", 0.9)
    make(other_tenant.workspace, "modulenotfounderror: no module named <str>", 0.95)
    listed = tenant.client.get("/api/v1/error-patterns/").json()
    assert [p["id"] for p in listed["results"]] == [high.pk, low.pk]
    by_text = tenant.client.get("/api/v1/error-patterns/?signature=ModuleNotFound").json()
    assert [p["id"] for p in by_text["results"]] == [high.pk]
    by_error = tenant.client.get(
        "/api/v1/error-patterns/", {"signature": "ModuleNotFoundError: No module named 'numpy'"}
    )
    assert [p["id"] for p in by_error.json()["results"]] == [high.pk]
    alias = tenant.client.get("/api/v1/error-patterns/?confidence=0.5").json()
    assert [p["id"] for p in alias["results"]] == [high.pk]
    by_confidence = tenant.client.get("/api/v1/error-patterns/?min_confidence=0.5").json()
    assert [p["id"] for p in by_confidence["results"]] == [high.pk]
    capped = tenant.client.get("/api/v1/error-patterns/?max_confidence=0.5").json()
    assert [p["id"] for p in capped["results"]] == [low.pk]
    bad = tenant.client.get("/api/v1/error-patterns/?min_confidence=high")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_min_confidence"
    out_of_range = tenant.client.get("/api/v1/error-patterns/?min_confidence=2")
    assert out_of_range.status_code == 400


def test_it_gets_and_deletes_a_pattern_of_its_own_workspace_only(tenant: Tenant, other_tenant: Tenant) -> None:
    mine = make(tenant.workspace, "keyerror: <str>", 0.8)
    detail = tenant.client.get(f"/api/v1/error-patterns/{mine.pk}/")
    assert detail.status_code == 200 and detail.json()["signature"] == "keyerror: <str>"
    foreign = other_tenant.client.get(f"/api/v1/error-patterns/{mine.pk}/")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "error_pattern_not_found"
    assert other_tenant.client.delete(f"/api/v1/error-patterns/{mine.pk}/").status_code == 404
    assert tenant.client.delete(f"/api/v1/error-patterns/{mine.pk}/").status_code == 204
    assert not ErrorPattern.objects.filter(pk=mine.pk).exists()
    assert tenant.client.get(f"/api/v1/error-patterns/{mine.pk}/").status_code == 404


def test_match_returns_the_exact_signature_first_then_the_nearest(tenant: Tenant, other_tenant: Tenant) -> None:
    exact = make(tenant.workspace, "psycopg.errors.undefinedtable: relation <str> does not exist", 0.6, "migrate")
    near = make(
        tenant.workspace,
        "psycopg.errors.undefinedtable: relation <str> does not exist line <n>: select * from <str>",
        0.9,
        "migrate the test db",
    )
    make(tenant.workspace, "zerodivisionerror: division by zero", 0.99)
    make(other_tenant.workspace, "psycopg.errors.undefinedtable: relation <str> does not exist", 0.99)
    response = tenant.client.post(
        "/api/v1/error-patterns/match/",
        {"error": 'psycopg.errors.UndefinedTable: relation "invoices" does not exist'},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["signature"] == "psycopg.errors.undefinedtable: relation <str> does not exist"
    assert [m["id"] for m in body["matches"]] == [exact.pk, near.pk]
    assert body["matches"][0]["exact"] is True and body["matches"][0]["similarity"] == 1.0
    assert body["matches"][1]["exact"] is False and 0.3 <= body["matches"][1]["similarity"] < 1.0
    assert body["matches"][1]["solution"] == "migrate the test db"
    strict = tenant.client.post(
        "/api/v1/error-patterns/match/",
        {"error": 'psycopg.errors.UndefinedTable: relation "x" does not exist', "min_confidence": 0.7},
        format="json",
    ).json()
    assert [m["id"] for m in strict["matches"]] == [near.pk]


def test_match_validates_its_input(tenant: Tenant) -> None:
    missing = tenant.client.post("/api/v1/error-patterns/match/", {}, format="json")
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid_error"
    too_many = tenant.client.post("/api/v1/error-patterns/match/", {"error": "x", "limit": 1000}, format="json")
    assert too_many.status_code == 400 and too_many.json()["error"]["code"] == "invalid_limit"


ENDPOINTS = [
    ("get", "/api/v1/attempts/"),
    ("post", "/api/v1/attempts/"),
    ("get", "/api/v1/error-patterns/"),
    ("get", "/api/v1/error-patterns/1/"),
    ("delete", "/api/v1/error-patterns/1/"),
    ("post", "/api/v1/error-patterns/match/"),
    ("post", "/api/v1/redact/"),
    ("get", "/api/v1/redaction/allowlist/"),
    ("post", "/api/v1/redaction/allowlist/"),
    ("get", "/api/v1/redaction/allowlist/1/"),
    ("delete", "/api/v1/redaction/allowlist/1/"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_needs_a_valid_key(anon: APIClient, tenant: Tenant, method: str, path: str) -> None:
    response = getattr(anon, method)(path, {}, format="json")
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"
    anon.credentials(HTTP_AUTHORIZATION="Bearer ca_not-a-real-key")
    response = getattr(anon, method)(path, {}, format="json")
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


def test_min_confidence_zero_is_not_ignored(tenant: Tenant) -> None:
    low = make(tenant.workspace, "timeouterror: read timed out after <n>s", 0.0)
    high = make(tenant.workspace, "modulenotfounderror: no module named <str>", 0.9)
    # min_confidence=0 wins over the `confidence` alias; `0 or alias` used to pick the alias.
    both = tenant.client.get("/api/v1/error-patterns/?min_confidence=0&confidence=0.5")
    assert both.status_code == 200
    assert [p["id"] for p in both.json()["results"]] == [high.pk, low.pk]
    alias = tenant.client.get("/api/v1/error-patterns/?confidence=0.5").json()
    assert [p["id"] for p in alias["results"]] == [high.pk]
