"""Item metadata is stored as jsonb: a NUL character anywhere in it is a 400, never a 500."""

from __future__ import annotations

import pytest

from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

BAD = ({"note": "a\u0000b"}, {"k\u0000": "v"}, {"deep": {"list": [1, {"x": "\u0000"}]}})


def test_nul_in_metadata_is_rejected_on_create_bulk_and_update(tenant: Tenant) -> None:
    body = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "fine"}
    for metadata in BAD:
        response = tenant.client.post("/api/v1/items/", {**body, "metadata": metadata}, format="json")
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "invalid_metadata"
    bulk = {"layer": tenant.root.pk, "items": [{**body, "metadata": BAD[2]}]}
    response = tenant.client.post("/api/v1/items/bulk/", bulk, format="json")
    assert response.status_code == 400 and "metadata" in response.json()["error"]["message"]
    created = tenant.client.post("/api/v1/items/", {**body, "metadata": {"ok": ["yes", 1]}}, format="json")
    assert created.status_code == 201 and created.json()["metadata"] == {"ok": ["yes", 1]}
    item_id = created.json()["id"]
    for metadata in BAD:
        response = tenant.client.patch(f"/api/v1/items/{item_id}/", {"metadata": metadata}, format="json")
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "invalid_metadata"
