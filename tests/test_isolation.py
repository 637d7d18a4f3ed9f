"""Every endpoint needs a valid key (401) and never reaches another workspace's data (404)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.layers.models import Item, Layer
from apps.workspaces.services import api_key_revoke
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("get", "/api/v1/layers/"),
    ("post", "/api/v1/layers/"),
    ("get", "/api/v1/layers/1/"),
    ("patch", "/api/v1/layers/1/"),
    ("delete", "/api/v1/layers/1/"),
    ("get", "/api/v1/items/"),
    ("post", "/api/v1/items/"),
    ("post", "/api/v1/items/bulk/"),
    ("get", "/api/v1/items/1/"),
    ("patch", "/api/v1/items/1/"),
    ("delete", "/api/v1/items/1/"),
    ("post", "/api/v1/context/"),
    ("get", "/api/v1/traces/7d3c1e6a-2f4b-4c8e-9a1d-5b6e0f2a9c47/"),  # fixed: xdist workers collect alike
    ("get", "/api/v1/status/"),
    ("get", "/api/v1/keys/"),
    ("post", "/api/v1/keys/"),
    ("post", "/api/v1/keys/1/revoke/"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_it_answers_401_without_a_valid_key(anon: APIClient, tenant: Tenant, method: str, path: str) -> None:
    response = getattr(anon, method)(path, {}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    anon.credentials(HTTP_AUTHORIZATION="Bearer ca_not-a-real-key")
    response = getattr(anon, method)(path, {}, format="json")
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


def test_a_revoked_key_stops_working(tenant: Tenant) -> None:
    assert tenant.client.get("/api/v1/status/").status_code == 200
    api_key_revoke(api_key=tenant.workspace.api_keys.get())
    assert tenant.client.get("/api/v1/status/").status_code == 401


def test_it_records_the_last_use_of_a_key(tenant: Tenant) -> None:
    key = tenant.workspace.api_keys.get()
    assert key.last_used_at is None
    tenant.client.get("/api/v1/status/")
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_it_hides_another_workspaces_data_behind_404(tenant: Tenant, other_tenant: Tenant) -> None:
    theirs = other_tenant.client.post(
        "/api/v1/layers/", {"kind": "session", "name": "secret session", "parent": other_tenant.root.pk}, format="json"
    ).json()
    (item_id,) = other_tenant.client.post(
        "/api/v1/items/bulk/",
        {
            "layer": theirs["id"],
            "items": [{"kind": "memory", "type": "fact", "content": "Globex launch code is 1234."}],
        },
        format="json",
    ).json()["ids"]
    trace = other_tenant.client.post(
        "/api/v1/context/", {"layer": theirs["id"], "query": "launch code"}, format="json"
    ).json()["trace_id"]
    their_key = other_tenant.workspace.api_keys.get().pk
    me = tenant.client
    my_admin = admin_client(tenant)
    lid = theirs["id"]
    checks = [
        me.get(f"/api/v1/layers/{lid}/"),
        me.patch(f"/api/v1/layers/{lid}/", {"name": "pwned"}, format="json"),
        me.delete(f"/api/v1/layers/{lid}/"),
        me.post("/api/v1/layers/", {"kind": "session", "name": "x", "parent": lid}, format="json"),
        me.patch(f"/api/v1/layers/{tenant.root.pk}/", {"parent": lid}, format="json"),
        me.get(f"/api/v1/items/{item_id}/"),
        me.patch(f"/api/v1/items/{item_id}/", {"content": "pwned"}, format="json"),
        me.delete(f"/api/v1/items/{item_id}/"),
        me.get(f"/api/v1/items/?layer={lid}"),
        me.post("/api/v1/items/", {"layer": lid, "kind": "memory", "type": "fact", "content": "x"}, format="json"),
        me.post(
            "/api/v1/items/bulk/",
            {"layer": lid, "items": [{"kind": "memory", "type": "fact", "content": "x"}]},
            format="json",
        ),
        me.post("/api/v1/context/", {"layer": lid, "query": "launch code"}, format="json"),
        me.get(f"/api/v1/traces/{trace}/"),
        my_admin.post(f"/api/v1/keys/{their_key}/revoke/"),
    ]
    assert [r.status_code for r in checks] == [404] * len(checks)
    assert all(r.json()["error"]["code"].endswith("not_found") for r in checks)
    assert Layer.objects.get(pk=lid).name == "secret session"
    assert Item.objects.get(pk=item_id).content == "Globex launch code is 1234."
    assert other_tenant.client.get("/api/v1/status/").status_code == 200


def test_context_from_my_layers_never_includes_another_workspace(tenant: Tenant, other_tenant: Tenant) -> None:
    for t, text in ((tenant, "Acme backups are kept 35 days."), (other_tenant, "Globex backups are kept 9 days.")):
        t.client.post(
            "/api/v1/items/bulk/",
            {"layer": t.root.pk, "items": [{"kind": "memory", "type": "fact", "content": text}]},
            format="json",
        )
    body = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "backups kept days"}, format="json"
    ).json()
    assert "Acme" in body["context"] and "Globex" not in body["context"]
    assert tenant.client.get("/api/v1/layers/").json()["count"] == 1
    assert tenant.client.get("/api/v1/items/").json()["count"] == 1
