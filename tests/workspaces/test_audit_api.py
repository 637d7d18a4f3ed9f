"""The audit trail over the API: who changed what through the API (a key, by name, never its secret),
each kind of change with its old and new values, secrets masked, filters, admin keys only."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from apps.workspaces.audit import acting_as, user_actor
from apps.workspaces.services import membership_remove, membership_set
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db
UPSTREAM_KEY = "sk-audit-0123456789abcdefghijklmnop"


def test_every_kind_of_change_is_recorded_with_who_and_the_values(tenant: Tenant) -> None:
    admin = admin_client(tenant)
    c = tenant.client
    layer = tenant.root.pk
    assert c.put(f"/api/v1/layers/{layer}/config/", {"update_on_changes": 7}, format="json").status_code == 200
    assert c.post("/api/v1/profiles/", {"name": "qa", "token_budget": 600}, format="json").status_code == 201
    assert c.put("/api/v1/profiles/qa/", {"name": "qa", "token_budget": 900}, format="json").status_code == 200
    assert c.post("/api/v1/templates/", {"name": "bullets", "body": "- {content}"}, format="json").status_code == 201
    item = c.post(
        "/api/v1/items/", {"layer": layer, "kind": "memory", "type": "fact", "content": "Old."}, format="json"
    ).json()
    assert c.patch(f"/api/v1/items/{item['id']}/", {"content": "New."}, format="json").status_code == 200
    assert c.delete(f"/api/v1/items/{item['id']}/").status_code == 204
    key = admin.post("/api/v1/keys/", {"name": "ci"}, format="json").json()
    assert admin.post(f"/api/v1/keys/{key['id']}/revoke/").status_code == 200
    upstream = {"base_url": "http://127.0.0.1:9/v1/", "key": UPSTREAM_KEY}
    assert admin.put("/api/v1/upstreams/openai/", upstream, format="json").status_code in (200, 201)
    person = get_user_model().objects.create_user(username="bob", password="x")
    with acting_as(user_actor(user_id=None, username="alice")):  # as the pages name their user
        membership_set(workspace=tenant.workspace, user=person, role="operator")
        membership_set(workspace=tenant.workspace, user=person, role="viewer")
    membership_remove(membership=tenant.workspace.memberships.get(user=person))

    response = admin.get("/api/v1/audit/", {"page_size": 100})
    assert response.status_code == 200, response.json()
    entries = response.json()["results"]
    seen = {(e["target_kind"], e["action"]) for e in entries}
    assert seen >= {
        ("config", "update"),
        ("profile", "create"),
        ("profile", "update"),
        ("template", "create"),
        ("item", "create"),
        ("item", "update"),
        ("item", "delete"),
        ("key", "create"),
        ("key", "revoke"),
        ("upstream", "create"),
        ("member", "create"),
        ("member", "update"),
        ("member", "delete"),
    }
    by = {(e["target_kind"], e["action"]): e for e in entries}
    assert by[("config", "update")]["changes"]["update_on_changes"][1] == 7
    assert by[("profile", "update")]["changes"]["token_budget"] == [600, 900]
    assert by[("item", "update")]["changes"]["content"] == ["Old.", "New."]
    assert by[("item", "delete")]["changes"]["content"] == ["New.", None]
    assert by[("member", "update")]["changes"]["role"] == ["operator", "viewer"]
    assert by[("member", "update")]["actor"] == "alice" and by[("member", "update")]["actor_kind"] == "user"
    assert by[("member", "delete")]["actor_kind"] == "system"
    assert by[("item", "create")]["actor"].startswith("key ") and by[("item", "create")]["actor_kind"] == "key"
    keys_made = [e for e in entries if (e["target_kind"], e["action"]) == ("key", "create")]
    (made,) = [e for e in keys_made if e["target_label"].startswith("ci (")]
    assert made["actor"].startswith("key admin") and made["changes"]["scopes"][1] == ["read", "write"]
    assert by[("upstream", "create")]["changes"]["key"] == ["(none)", "•••• (set)"]
    dumped = response.content.decode()
    assert UPSTREAM_KEY not in dumped and tenant.secret not in dumped and key["key"] not in dumped

    only = admin.get("/api/v1/audit/", {"target_kind": "item"}).json()["results"]
    assert {e["target_kind"] for e in only} == {"item"} and len(only) == 3
    # Text within the values, any case: the item's first content is in its update's values only.
    found = admin.get("/api/v1/audit/", {"q": "old."}).json()["results"]
    assert [(e["target_kind"], e["action"]) for e in found] == [("item", "update")]
    assert [e["target_kind"] for e in admin.get("/api/v1/audit/", {"q": "bullets"}).json()["results"]] == ["template"]
    assert admin.get("/api/v1/audit/", {"q": "no such text anywhere"}).json()["results"] == []
    assert admin.get("/api/v1/audit/", {"target_kind": "nope"}).json()["error"]["code"] == "invalid_target_kind"
    assert admin.get("/api/v1/audit/", {"since": "yesterday"}).json()["error"]["code"] == "invalid_since"
    assert c.get("/api/v1/audit/").status_code == 403  # a read+write key: not an admin


def test_a_workspace_sees_only_its_own_trail(tenant: Tenant, other_tenant: Tenant) -> None:
    tenant.client.post("/api/v1/profiles/", {"name": "mine", "token_budget": 600}, format="json")
    theirs = admin_client(other_tenant).get("/api/v1/audit/").json()["results"]
    assert all(e["target_label"] != "mine" for e in theirs)
