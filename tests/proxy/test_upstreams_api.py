"""`/api/v1/upstreams/` and `/api/v1/proxy/settings/`: admin keys only, the key sealed and never shown."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.core.errors import InvalidInput
from apps.layers.services import layer_create
from apps.proxy.models import Upstream
from apps.proxy.selectors import proxy_default_parent, upstream_target
from tests.support.tenants import Tenant, admin_client

SECRET = "sk-upstream-Secret-0123456789abcdef"


@pytest.fixture
def admin(tenant: Tenant) -> APIClient:
    return admin_client(tenant)


def test_it_stores_an_upstream_and_never_answers_with_its_key(admin: APIClient, tenant: Tenant) -> None:
    answer = admin.put(
        "/api/v1/upstreams/openai/", {"base_url": "http://127.0.0.1:9/v1/", "key": SECRET}, format="json"
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["base_url"] == "http://127.0.0.1:9/v1" and answer.json()["has_key"] is True
    listed = admin.get("/api/v1/upstreams/")
    one = admin.get("/api/v1/upstreams/openai/")
    for response in (answer, listed, one):
        assert SECRET not in response.content.decode()
    assert [u["kind"] for u in listed.json()] == ["openai"]
    row = Upstream.objects.get(workspace=tenant.workspace, kind="openai")
    assert SECRET.encode() not in bytes(row.key_sealed)
    target = upstream_target(workspace_id=tenant.workspace.pk, kind="openai", request_key=None)
    assert target.key == SECRET and SECRET not in repr(target)


def test_a_change_keeps_what_it_does_not_name_and_null_removes_the_key(admin: APIClient, tenant: Tenant) -> None:
    assert admin.put("/api/v1/upstreams/anthropic/", {"key": SECRET}, format="json").status_code == 201
    changed = admin.put("/api/v1/upstreams/anthropic/", {"base_url": "https://llm.example/"}, format="json")
    assert changed.status_code == 200 and changed.json()["has_key"] is True
    assert changed.json()["base_url"] == "https://llm.example"
    removed = admin.put("/api/v1/upstreams/anthropic/", {"key": None}, format="json")
    assert removed.json()["has_key"] is False
    assert upstream_target(workspace_id=tenant.workspace.pk, kind="anthropic", request_key=None).key == ""


def test_a_new_upstream_starts_at_the_providers_own_url(admin: APIClient) -> None:
    created = admin.put("/api/v1/upstreams/anthropic/", {"key": SECRET}, format="json")
    assert created.json()["base_url"] == "https://api.anthropic.com"


def test_it_refuses_bad_urls_and_keys_without_echoing_them(admin: APIClient) -> None:
    for url in ("ftp://x/v1", "not a url", "https://user:pw@host/v1", "https://host/v1?key=1"):
        answer = admin.put("/api/v1/upstreams/openai/", {"base_url": url}, format="json")
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "invalid_base_url"), url
    bad_key = "sk-with space " + SECRET
    answer = admin.put("/api/v1/upstreams/openai/", {"key": bad_key}, format="json")
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "invalid_upstream_key")
    assert SECRET not in answer.content.decode()
    assert not Upstream.objects.exists()


def test_an_unknown_kind_is_not_found(admin: APIClient) -> None:
    for method in (admin.get, admin.delete):
        answer = method("/api/v1/upstreams/gemini/")
        assert (answer.status_code, answer.json()["error"]["code"]) == (404, "upstream_not_found")
    answer = admin.put("/api/v1/upstreams/gemini/", {"key": SECRET}, format="json")
    assert answer.status_code == 404


def test_it_needs_an_admin_key(tenant: Tenant) -> None:
    for answer in (
        tenant.client.get("/api/v1/upstreams/"),
        tenant.client.put("/api/v1/upstreams/openai/", {"key": SECRET}, format="json"),
        tenant.client.get("/api/v1/proxy/settings/"),
    ):
        assert (answer.status_code, answer.json()["error"]["code"]) == (403, "insufficient_scope")


def test_another_workspace_neither_sees_nor_uses_the_upstream(
    admin: APIClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    admin.put("/api/v1/upstreams/openai/", {"base_url": "http://127.0.0.1:9/v1", "key": SECRET}, format="json")
    other = admin_client(other_tenant)
    assert other.get("/api/v1/upstreams/").json() == []
    assert other.get("/api/v1/upstreams/openai/").status_code == 404
    assert other.delete("/api/v1/upstreams/openai/").status_code == 404
    assert Upstream.objects.filter(workspace=tenant.workspace).exists()


def test_a_sealed_key_copied_to_another_workspace_does_not_open(
    admin: APIClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    admin.put("/api/v1/upstreams/openai/", {"key": SECRET}, format="json")
    sealed = bytes(Upstream.objects.get(workspace=tenant.workspace).key_sealed)
    Upstream.objects.create(workspace=other_tenant.workspace, kind="openai", base_url="http://x/v1", key_sealed=sealed)
    with pytest.raises(InvalidInput) as refused:
        upstream_target(workspace_id=other_tenant.workspace.pk, kind="openai", request_key=None)
    assert refused.value.code == "upstream_key_unreadable"


def test_the_default_parent_is_a_layer_of_the_workspace_above_sessions(
    admin: APIClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert admin.get("/api/v1/proxy/settings/").json() == {"default_parent": None}
    project = layer_create(workspace=tenant.workspace, kind="project", name="agents", parent=tenant.root)
    assert admin.put("/api/v1/proxy/settings/", {"default_parent": project.pk}, format="json").status_code == 200
    assert proxy_default_parent(workspace_id=tenant.workspace.pk) == project
    session = layer_create(workspace=tenant.workspace, kind="session", name="s", parent=project)
    refused = admin.put("/api/v1/proxy/settings/", {"default_parent": session.pk}, format="json")
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_parent")
    foreign = admin.put("/api/v1/proxy/settings/", {"default_parent": other_tenant.root.pk}, format="json")
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "layer_not_found")
    assert admin.put("/api/v1/proxy/settings/", {"default_parent": None}, format="json").json() == {
        "default_parent": None
    }
