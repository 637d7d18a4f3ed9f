"""POST /api/v1/redact/, the allow-list API, and redaction of everything stored from attempts."""

from __future__ import annotations

import pytest

from apps.error_patterns.models import Attempt, ErrorPattern
from apps.layers.services import layer_create
from tests.support.tenants import Tenant

TOKEN = "ghp_k3Jd8sLq0ZxV5nB2mC7rT1yW9eA4uH6gF0pQ"
PASSWORD = "Tr0ub4dor&3x"


def redact(tenant: Tenant, text: str) -> dict[str, object]:
    response = tenant.client.post("/api/v1/redact/", {"text": text}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_it_redacts_and_reports_findings_in_the_original_text(tenant: Tenant) -> None:
    text = f"push failed with {TOKEN} for jane@example.com"
    body = redact(tenant, text)
    assert body["text"] == "push failed with [REDACTED:github_token] for [REDACTED:email]"
    findings = body["findings"]
    assert [f["type"] for f in findings] == ["github_token", "email"]
    assert text[findings[0]["start"] : findings[0]["end"]] == TOKEN
    assert text[findings[1]["start"] : findings[1]["end"]] == "jane@example.com"


def test_it_leaves_common_non_secrets_alone(tenant: Tenant) -> None:
    text = (
        "build 9fceb02d0ae598e95dc970b74767f19372d61af8 of v2.31.4-beta.2 failed for request "
        "550e8400-e29b-41d4-a716-446655440000 in /home/runner/work/app/src/main.py"
    )
    assert redact(tenant, text) == {"text": text, "findings": []}


def test_redacting_twice_changes_nothing(tenant: Tenant) -> None:
    once = redact(tenant, f"password={PASSWORD}")["text"]
    assert redact(tenant, str(once)) == {"text": once, "findings": []}


def test_it_validates_the_text(tenant: Tenant) -> None:
    missing = tenant.client.post("/api/v1/redact/", {}, format="json")
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid_text"
    wrong = tenant.client.post("/api/v1/redact/", {"text": ["a"]}, format="json")
    assert wrong.status_code == 400


def test_the_allow_list_keeps_a_workspaces_false_positives(tenant: Tenant, other_tenant: Tenant) -> None:
    text = "fixture key sk_test_FAKEFAKEFAKEFAKE1234 and AKIAIOSFODNN7EXAMPLE in docs"
    assert "sk_test_" not in str(redact(tenant, text)["text"])
    exact = tenant.client.post("/api/v1/redaction/allowlist/", {"value": "AKIAIOSFODNN7EXAMPLE"}, format="json")
    assert exact.status_code == 201 and exact.json()["kind"] == "exact"
    pattern = tenant.client.post(
        "/api/v1/redaction/allowlist/", {"kind": "pattern", "value": r"sk_test_FAKE\w+", "note": "docs"}, format="json"
    )
    assert pattern.status_code == 201
    assert redact(tenant, text)["text"] == text
    assert "AKIAIOSFODNN7EXAMPLE" not in str(redact(other_tenant, text)["text"])  # per workspace
    listed = tenant.client.get("/api/v1/redaction/allowlist/").json()
    assert [e["value"] for e in listed] == ["AKIAIOSFODNN7EXAMPLE", r"sk_test_FAKE\w+"]
    assert other_tenant.client.get("/api/v1/redaction/allowlist/").json() == []
    entry = exact.json()["id"]
    assert other_tenant.client.delete(f"/api/v1/redaction/allowlist/{entry}/").status_code == 404
    assert tenant.client.delete(f"/api/v1/redaction/allowlist/{entry}/").status_code == 204
    assert "AKIAIOSFODNN7EXAMPLE" not in str(redact(tenant, text)["text"])


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"kind": "pattern", "value": "sk_(live"}, "invalid_pattern"),
        ({"kind": "pattern", "value": ".*"}, "invalid_pattern"),
        ({"kind": "regex", "value": "x"}, "invalid_kind"),
        ({"value": ""}, "invalid_value"),
        ({"value": "x" * 501}, "invalid_value"),
    ],
)
def test_the_allow_list_validates_entries(tenant: Tenant, body: dict[str, str], code: str) -> None:
    response = tenant.client.post("/api/v1/redaction/allowlist/", body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == code


def test_a_duplicate_entry_is_a_conflict(tenant: Tenant) -> None:
    assert tenant.client.post("/api/v1/redaction/allowlist/", {"value": "abc"}, format="json").status_code == 201
    again = tenant.client.post("/api/v1/redaction/allowlist/", {"value": "abc"}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "allowlist_entry_exists"


def test_nothing_stored_from_attempts_keeps_a_secret(tenant: Tenant) -> None:
    session = layer_create(workspace=tenant.workspace, kind="session", name="s", parent=tenant.root, external_id="s")
    error = f"remote: Invalid credentials for https://{TOKEN}@github.com/acme/app.git (password={PASSWORD})"
    solution = f"Set GITHUB_TOKEN={TOKEN} and mail ops@acme.io"
    for outcome, fields in (("failed", {"error": error}), ("succeeded", {"solution": solution})):
        response = tenant.client.post(
            "/api/v1/attempts/", {"layer": session.pk, "outcome": outcome, **fields}, format="json"
        )
        assert response.status_code == 201
        assert TOKEN not in response.content.decode() and PASSWORD not in response.content.decode()
    stored = [
        *Attempt.objects.values_list("error", "signature", "solution"),
        *ErrorPattern.objects.values_list("error_excerpt", "signature", "solution"),
    ]
    assert len(stored) == 3
    flat = " ".join(" ".join(row) for row in stored)
    assert TOKEN not in flat and PASSWORD not in flat and "ops@acme.io" not in flat
    assert "[REDACTED:github_token]" in flat and "[REDACTED:email]" in flat
