"""Profiles need a valid API key (401) and never reach another workspace's profiles (404)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.profiles.models import AgentProfile
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("get", "/api/v1/profiles/"),
    ("post", "/api/v1/profiles/"),
    ("get", "/api/v1/profiles/theirs/"),
    ("put", "/api/v1/profiles/theirs/"),
    ("delete", "/api/v1/profiles/theirs/"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_it_answers_401_without_a_valid_key(anon: APIClient, other_tenant: Tenant, method: str, path: str) -> None:
    AgentProfile.objects.create(workspace=other_tenant.workspace, name="theirs")
    response = getattr(anon, method)(path, {"name": "mine"}, format="json")
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"
    anon.credentials(HTTP_AUTHORIZATION="Bearer ca_not-a-real-key")
    response = getattr(anon, method)(path, {"name": "mine"}, format="json")
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"
    assert list(AgentProfile.objects.values_list("name", flat=True)) == ["theirs"]


def test_it_never_shows_or_changes_another_workspaces_profile(tenant: Tenant, other_tenant: Tenant) -> None:
    theirs = AgentProfile.objects.create(workspace=other_tenant.workspace, name="theirs", token_budget=77)
    for response in [
        tenant.client.get("/api/v1/profiles/theirs/"),
        tenant.client.put("/api/v1/profiles/theirs/", {"token_budget": 1}, format="json"),
        tenant.client.delete("/api/v1/profiles/theirs/"),
    ]:
        assert response.status_code == 404 and response.json()["error"]["code"] == "profile_not_found"
    assert tenant.client.get("/api/v1/profiles/").json()["count"] == 0
    theirs.refresh_from_db()
    assert theirs.token_budget == 77
    assert other_tenant.client.get("/api/v1/profiles/theirs/").json()["token_budget"] == 77


def test_a_workspace_can_reuse_another_workspaces_profile_name(tenant: Tenant, other_tenant: Tenant) -> None:
    AgentProfile.objects.create(workspace=other_tenant.workspace, name="shared", token_budget=77)
    mine = tenant.client.post("/api/v1/profiles/", {"name": "shared", "token_budget": 5}, format="json")
    assert mine.status_code == 201
    assert tenant.client.get("/api/v1/profiles/shared/").json()["token_budget"] == 5
    assert other_tenant.client.get("/api/v1/profiles/shared/").json()["token_budget"] == 77
