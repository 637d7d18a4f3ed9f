"""Superseded items over the API: named on write or proposed and accepted; out of contexts with their
reason in the trace, still listed and found by the history tool."""

from __future__ import annotations

import pytest

from apps.layers.embedder import items_embed_pending
from apps.layers.models import EmbeddingClaim, Item, Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    body = tenant.client.post(
        "/api/v1/layers/", {"kind": "project", "name": "People", "parent": tenant.root.pk}, format="json"
    ).json()
    return Layer.objects.get(pk=body["id"])


def fact(t: Tenant, layer: Layer, content: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = t.client.post(
        "/api/v1/items/",
        {"layer": layer.pk, "kind": "memory", "type": "fact", "content": content, **fields},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def context(t: Tenant, layer: Layer, query: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = t.client.post(
        "/api/v1/context/", {"layer": layer.pk, "query": query, "token_budget": 400, **fields}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()


def test_a_superseded_item_leaves_the_context_with_its_reason(tenant: Tenant, project: Layer) -> None:
    old = fact(tenant, project, "Alice lives in Paris.")
    fact(tenant, project, "Alice's manager is Carol.")
    new = fact(tenant, project, "Alice moved to Berlin in May.", supersedes=[old["id"]])
    assert new["superseded_by"] is None
    items_embed_pending(workspace_id=tenant.workspace.pk)
    answer = context(tenant, project, "Where does Alice live?")
    assert "Berlin" in answer["context"] and "Paris" not in answer["context"]
    trace = tenant.client.get(f"/api/v1/traces/{answer['trace_id']}/").json()["trace"]
    (entry,) = [e for e in trace if e["id"] == old["id"]]
    assert entry["decision"] == "excluded" and entry["reason"] == "superseded"
    assert entry["superseded_by"] == new["id"]
    listed = tenant.client.get(f"/api/v1/items/{old['id']}/").json()
    assert listed["superseded_by"] == new["id"]  # still stored and listed
    asked = context(tenant, project, "Where does Alice live?", include_superseded=True)
    assert "Paris" in asked["context"] and "Berlin" in asked["context"]


def test_history_still_finds_a_superseded_message(tenant: Tenant) -> None:
    session = tenant.client.post(
        "/api/v1/layers/", {"kind": "session", "name": "Standup", "parent": tenant.root.pk}, format="json"
    ).json()["id"]
    said = [
        {"kind": "message", "role": "user", "content": "The release is planned for Thursday."},
        {"kind": "message", "role": "assistant", "content": "Noted: release on Thursday."},
    ]
    ids = tenant.client.post("/api/v1/items/bulk/", {"layer": session, "items": said}, format="json").json()["ids"]
    correction = tenant.client.post(
        "/api/v1/items/",
        {
            "layer": session,
            "kind": "message",
            "role": "user",
            "content": "Correction: the release moved to Monday.",
            "supersedes": [ids[0]],
        },
        format="json",
    ).json()
    items_embed_pending(workspace_id=tenant.workspace.pk)
    layer = Layer.objects.get(pk=session)
    answer = context(tenant, layer, "When is the release planned?")
    assert "Thursday." not in answer["context"].replace("release on Thursday", "")
    found = tenant.client.get("/api/v1/history/", {"layer": session, "query": "release planned for Thursday"}).json()
    assert ids[0] in [m["id"] for m in found["messages"]]
    assert Item.objects.get(pk=ids[0]).superseded_by_id == correction["id"]


def test_supersedes_names_items_of_the_workspace_only(tenant: Tenant, other_tenant: Tenant, project: Layer) -> None:
    foreign = other_tenant.client.post(
        "/api/v1/items/",
        {"layer": other_tenant.root.pk, "kind": "memory", "type": "fact", "content": "Theirs."},
        format="json",
    ).json()
    for ids in ([foreign["id"]], [999_999]):
        response = tenant.client.post(
            "/api/v1/items/",
            {"layer": project.pk, "kind": "memory", "type": "fact", "content": "Mine.", "supersedes": ids},
            format="json",
        )
        assert response.status_code == 404 and response.json()["error"]["code"] == "item_not_found"
    assert not Item.objects.filter(layer=project).exists()
    assert Item.objects.get(pk=foreign["id"]).superseded_by_id is None


def test_the_detector_proposes_and_an_accepted_proposal_supersedes(tenant: Tenant, project: Layer) -> None:
    paris = fact(tenant, project, "Alice lives in Paris.")
    fact(tenant, project, "Bob lives in Paris.")
    fact(tenant, project, "The staging server is at 10.0.0.5.")
    items_embed_pending(workspace_id=tenant.workspace.pk)
    berlin = fact(tenant, project, "Alice moved to Berlin.")
    items_embed_pending(workspace_id=tenant.workspace.pk)
    pending = tenant.client.get("/api/v1/supersessions/", {"state": "pending"}).json()["results"]
    assert [(p["old"]["id"], p["new"]["id"]) for p in pending] == [(paris["id"], berlin["id"])]
    assert "similarity" in pending[0]["reason"] and 0.88 <= pending[0]["similarity"] < 1
    accepted = tenant.client.post(f"/api/v1/supersessions/{pending[0]['id']}/accept/")
    assert accepted.status_code == 200 and accepted.json()["state"] == "accepted"
    assert accepted.json()["decided_by"].startswith("key ") and tenant.secret not in accepted.json()["decided_by"]
    assert Item.objects.get(pk=paris["id"]).superseded_by_id == berlin["id"]
    again = tenant.client.post(f"/api/v1/supersessions/{pending[0]['id']}/reject/")
    assert again.status_code == 409 and again.json()["error"]["code"] == "proposal_decided"
    missing = tenant.client.post("/api/v1/supersessions/999999/accept/")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "proposal_not_found"
    bad = tenant.client.get("/api/v1/supersessions/", {"state": "maybe"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_state"


def test_the_detector_proposes_when_the_older_item_is_embedded_after_the_newer(tenant: Tenant, project: Layer) -> None:
    # Concurrent embedding runners (or a newest-first backlog) can store the newer item's vector first.
    paris = fact(tenant, project, "Alice lives in Paris.")
    fact(tenant, project, "The staging server is at 10.0.0.5.")
    berlin = fact(tenant, project, "Alice moved to Berlin.")
    lease = EmbeddingClaim.objects.create(item_id=paris["id"], claimed_until="2999-01-01T00:00:00Z")  # another runner
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert not tenant.client.get("/api/v1/supersessions/", {"state": "pending"}).json()["results"]
    lease.delete()
    items_embed_pending(workspace_id=tenant.workspace.pk)
    pending = tenant.client.get("/api/v1/supersessions/", {"state": "pending"}).json()["results"]
    assert [(p["old"]["id"], p["new"]["id"]) for p in pending] == [(paris["id"], berlin["id"])]


def test_a_rejected_proposal_supersedes_nothing(tenant: Tenant, other_tenant: Tenant, project: Layer) -> None:
    old = fact(tenant, project, "Our CI uses GitHub Actions.")
    items_embed_pending(workspace_id=tenant.workspace.pk)
    fact(tenant, project, "Our CI moved from GitHub Actions to Buildkite.")
    items_embed_pending(workspace_id=tenant.workspace.pk)
    (proposal,) = tenant.client.get("/api/v1/supersessions/", {"layer": project.pk}).json()["results"]
    assert other_tenant.client.post(f"/api/v1/supersessions/{proposal['id']}/reject/").status_code == 404
    rejected = tenant.client.post(f"/api/v1/supersessions/{proposal['id']}/reject/")
    assert rejected.status_code == 200 and rejected.json()["state"] == "rejected"
    assert Item.objects.get(pk=old["id"]).superseded_by_id is None
