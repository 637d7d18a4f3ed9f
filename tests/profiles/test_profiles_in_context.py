"""POST /api/v1/context/ takes its budget and format from a named profile, and survives an unknown one."""

from __future__ import annotations

import pytest

from tests.support.api import ask
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant) -> int:
    layer = tenant.client.post(
        "/api/v1/layers/", {"kind": "session", "name": "s", "parent": tenant.root.pk}, format="json"
    ).json()["id"]
    items = [
        {"kind": "memory", "type": "fact", "content": "Database backups are taken nightly and kept for 35 days."},
        {"kind": "memory", "type": "fact", "content": "Deploys to production happen every Tuesday afternoon."},
    ]
    response = tenant.client.post("/api/v1/items/bulk/", {"layer": layer, "items": items}, format="json")
    assert response.status_code == 201
    return layer


def test_it_uses_the_profiles_budget_and_format(tenant: Tenant, session: int) -> None:
    created = tenant.client.post(
        "/api/v1/profiles/", {"name": "terse", "token_budget": 25, "preferred_format": "text"}, format="json"
    )
    assert created.status_code == 201
    body = ask(tenant, layer=session, query="backups", profile="terse")
    assert body["token_budget"] == 25 and body["format"] == "text" and 0 < body["total_tokens"] <= 25
    assert not any("profile" in w for w in body["warnings"])


def test_the_request_overrides_the_profile(tenant: Tenant, session: int) -> None:
    tenant.client.post("/api/v1/profiles/", {"name": "terse", "token_budget": 25, "preferred_format": "text"})
    body = ask(tenant, layer=session, query="backups", profile="terse", token_budget=500, format="json")
    assert body["token_budget"] == 500 and body["format"] == "json"


def test_an_updated_profile_takes_effect_on_the_next_request(tenant: Tenant, session: int) -> None:
    tenant.client.post("/api/v1/profiles/", {"name": "p", "token_budget": 25}, format="json")
    tenant.client.put("/api/v1/profiles/p/", {"token_budget": 40, "preferred_format": "json"}, format="json")
    body = ask(tenant, layer=session, query="backups", profile="p")
    assert body["token_budget"] == 40 and body["format"] == "json"


def test_an_unknown_profile_falls_back_to_the_defaults_with_a_warning(
    tenant: Tenant, other_tenant: Tenant, session: int
) -> None:
    other_tenant.client.post("/api/v1/profiles/", {"name": "theirs", "token_budget": 25}, format="json")
    for name in ["ghost", "theirs"]:  # another workspace's profile is unknown here
        body = ask(tenant, layer=session, query="backups", profile=name)
        assert body["token_budget"] == 8000 and body["format"] == "markdown"
        assert any(name in w and "profile" in w for w in body["warnings"]), body["warnings"]


def test_a_deleted_profile_falls_back_with_a_warning(tenant: Tenant, session: int) -> None:
    tenant.client.post("/api/v1/profiles/", {"name": "brief", "token_budget": 25}, format="json")
    assert tenant.client.delete("/api/v1/profiles/brief/").status_code == 204
    body = ask(tenant, layer=session, query="backups", profile="brief")
    assert body["token_budget"] == 8000 and any("brief" in w for w in body["warnings"])
