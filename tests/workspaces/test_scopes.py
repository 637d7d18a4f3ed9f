"""API key scopes: GET needs read, changes need write, the keys API needs admin."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.workspaces.models import ApiKey
from apps.workspaces.services import api_key_create
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db


def client_for(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_it_gives_the_workspaces_first_key_read_and_write_only(tenant: Tenant) -> None:
    assert tenant.workspace.api_keys.get().scopes == ["read", "write"]
    assert tenant.client.get("/api/v1/layers/").status_code == 200
    created = tenant.client.post(
        "/api/v1/layers/", {"kind": "project", "name": "P", "parent": tenant.root.pk}, format="json"
    )
    assert created.status_code == 201
    for response in (
        tenant.client.get("/api/v1/keys/"),
        tenant.client.post("/api/v1/keys/", {"name": "mine", "scopes": ["admin"]}, format="json"),
        tenant.client.post(f"/api/v1/keys/{tenant.workspace.api_keys.get().pk}/revoke/"),
    ):
        assert response.status_code == 403
        assert response.json()["error"] == {
            "code": "insufficient_scope",
            "message": "this API key lacks the 'admin' scope",
            "details": {"required": "admin", "scopes": ["read", "write"]},
        }
    assert tenant.workspace.api_keys.count() == 1 and tenant.workspace.api_keys.get().revoked_at is None


def test_an_admin_key_mints_keys_with_scopes_and_revokes_them(tenant: Tenant) -> None:
    admin = admin_client(tenant)
    response = admin.post("/api/v1/keys/", {"name": "reader", "scopes": ["read"]}, format="json")
    assert response.status_code == 201 and response.json()["scopes"] == ["read"]
    reader = client_for(response.json()["key"])

    assert reader.get("/api/v1/layers/").status_code == 200
    assert reader.post("/api/v1/context/", {"layer": tenant.root.pk, "query": "q"}, format="json").status_code == 200
    assert reader.post("/api/v1/redact/", {"text": "password=hunter2"}, format="json").status_code == 200
    denied = reader.post("/api/v1/layers/", {"kind": "project", "name": "P", "parent": tenant.root.pk}, format="json")
    assert denied.status_code == 403 and denied.json()["error"]["details"]["required"] == "write"
    assert reader.delete(f"/api/v1/layers/{tenant.root.pk}/").status_code == 403

    default = admin.post("/api/v1/keys/", {"name": "agent"}, format="json").json()
    assert default["scopes"] == ["read", "write"]
    listed = admin.get("/api/v1/keys/").json()
    assert {k["name"]: k["scopes"] for k in listed} == {
        "default": ["read", "write"],
        "admin": ["read", "write", "admin"],
        "reader": ["read"],
        "agent": ["read", "write"],
    }
    revoked = admin.post(f"/api/v1/keys/{response.json()['id']}/revoke/")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert reader.get("/api/v1/layers/").status_code == 401


def test_a_write_only_key_cannot_read(tenant: Tenant) -> None:
    writer = client_for(api_key_create(workspace=tenant.workspace, name="w", scopes=["write"]).secret)
    assert (
        writer.post(
            "/api/v1/layers/", {"kind": "project", "name": "P", "parent": tenant.root.pk}, format="json"
        ).status_code
        == 201
    )
    response = writer.get("/api/v1/layers/")
    assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"


@pytest.mark.parametrize("scopes", [["root"], [], ["read", "sudo"]])
def test_it_rejects_unknown_or_no_scopes(tenant: Tenant, scopes: list[str]) -> None:
    response = admin_client(tenant).post("/api/v1/keys/", {"name": "x", "scopes": scopes}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_scopes"
    assert not ApiKey.objects.filter(name="x").exists()


def test_create_api_key_prints_an_admin_key_alone_on_the_last_line(tenant: Tenant) -> None:
    out = StringIO()
    call_command("create_api_key", "acme", "--name", "ops", stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]
    key = ApiKey.objects.get(name="ops")
    assert key.scopes == ["read", "write", "admin"]
    assert client_for(secret).get("/api/v1/keys/").status_code == 200

    out = StringIO()
    call_command("create_api_key", "acme", "--name", "ro", "--scopes", "read", stdout=out)
    assert ApiKey.objects.get(name="ro").scopes == ["read"]
