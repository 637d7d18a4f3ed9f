"""A workspace registers its own chunk templates and uses them by name in context requests."""

from __future__ import annotations

import pytest

from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_a_registered_template_renders_chunks_by_type(tenant: Tenant) -> None:
    body = {
        "name": "terse",
        "body": "- {content}",
        "by_type": {"memory/decision": "!! {content}", "decision": "D: {content}"},
    }
    created = tenant.client.post("/api/v1/templates/", body, format="json")
    assert created.status_code == 201 and created.json()["name"] == "terse"
    tenant.client.post(
        "/api/v1/items/bulk/",
        {
            "layer": tenant.root.pk,
            "items": [
                {"kind": "memory", "type": "decision", "content": "Ship on Fridays."},
                {"kind": "memory", "type": "fact", "content": "Ship logs go to S3."},
            ],
        },
        format="json",
    )
    context = tenant.client.post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query": "ship", "template": "terse", "format": "text"},
        format="json",
    ).json()["context"]
    assert set(context.split("\n\n")) == {"D: Ship on Fridays.", "- Ship logs go to S3."}


def test_templates_are_validated_listed_replaced_and_deleted(tenant: Tenant, other_tenant: Tenant) -> None:
    for bad, code in (
        ({"name": "x", "body": "{content.__class__}"}, "invalid_template"),
        ({"name": "chat", "body": "{content}"}, "invalid_name"),
        ({"name": "bad name", "body": "{content}"}, "invalid_name"),
        ({"name": "x", "body": "{content}", "by_type": {"fact": "{nope}"}}, "invalid_template"),
    ):
        response = tenant.client.post("/api/v1/templates/", bad, format="json")
        assert response.status_code == 400 and response.json()["error"]["code"] == code, bad
    assert (
        tenant.client.post("/api/v1/templates/", {"name": "t", "body": "{content}"}, format="json").status_code == 201
    )
    again = tenant.client.post("/api/v1/templates/", {"name": "t", "body": "{content}"}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "duplicate_template"
    assert [t["name"] for t in tenant.client.get("/api/v1/templates/").json()] == ["t"]
    replaced = tenant.client.put("/api/v1/templates/t/", {"body": "* {content}"}, format="json")
    assert replaced.status_code == 200 and replaced.json()["body"] == "* {content}"
    assert other_tenant.client.get("/api/v1/templates/t/").status_code == 404
    assert other_tenant.client.delete("/api/v1/templates/t/").status_code == 404
    assert tenant.client.delete("/api/v1/templates/t/").status_code == 204
    assert tenant.client.get("/api/v1/templates/t/").status_code == 404
