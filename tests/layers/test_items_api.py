"""Items over the API: every kind, bulk all-or-nothing, validation, updates and listing."""

from __future__ import annotations

import pytest

from apps.core.tokenizer import count_tokens
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant) -> Layer:
    body = tenant.client.post(
        "/api/v1/layers/", {"kind": "session", "name": "s", "parent": tenant.root.pk}, format="json"
    ).json()
    return Layer.objects.get(pk=body["id"])


def bulk(t: Tenant, layer: Layer, items: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    return t.client.post("/api/v1/items/bulk/", {"layer": layer.pk, "items": items}, format="json")


def test_it_stores_every_kind_with_exact_token_counts(tenant: Tenant, session: Layer) -> None:
    items = [
        {"kind": "message", "role": "user", "content": "Can we ship on Friday?", "task_ids": ["T-1"]},
        {"kind": "memory", "type": "decision", "content": "We ship on Fridays.", "confidence": 0.9},
        {
            "kind": "package",
            "content": "Research notes.",
            "priority": "high",
            "group_id": "g1",
            "agent_types": ["coder"],
            "source_refs": ["docs/a.md"],
        },
        {"kind": "spec", "type": "requirement", "content": "The API must answer in 100 ms.", "pinned": True},
        {
            "kind": "document",
            "type": "runbook",
            "title": "Deploys",
            "content": "Run make deploy.",
            "created_at": "2024-01-02T03:04:05Z",
            "metadata": {"source": "wiki"},
        },
    ]
    response = bulk(tenant, session, items)
    assert response.status_code == 201
    stored = list(Item.objects.filter(pk__in=response.json()["ids"]).order_by("id"))
    assert [i.kind for i in stored] == ["message", "memory", "package", "spec", "document"]
    assert stored[0].role == "user" and stored[0].task_ids == ["T-1"]
    assert stored[2].priority == "high" and stored[2].agent_types == ["coder"]
    assert stored[3].pinned and stored[4].created_at.year == 2024 and stored[4].metadata == {"source": "wiki"}
    assert stored[1].token_count == count_tokens("We ship on Fridays.", "o200k_base")
    assert all(i.embedding is None for i in stored)


def test_it_links_message_replies_to_their_parent(tenant: Tenant, session: Layer) -> None:
    first = tenant.client.post(
        "/api/v1/items/", {"layer": session.pk, "kind": "message", "role": "user", "content": "Hi"}, format="json"
    ).json()
    reply = tenant.client.post(
        "/api/v1/items/",
        {"layer": session.pk, "kind": "message", "role": "assistant", "content": "Hello", "parent": first["id"]},
        format="json",
    )
    assert reply.status_code == 201 and reply.json()["parent"] == first["id"]
    missing = tenant.client.post(
        "/api/v1/items/",
        {"layer": session.pk, "kind": "message", "role": "assistant", "content": "x", "parent": 999999},
        format="json",
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "parent_not_found"


def test_bulk_is_all_or_nothing(tenant: Tenant, session: Layer) -> None:
    good = [{"kind": "memory", "type": "fact", "content": f"fact {i}"} for i in range(3)]
    for bad in (
        {"kind": "no-such-kind", "content": "x"},
        {"kind": "memory", "type": "opinion", "content": "x"},
        {"kind": "memory", "type": "fact", "content": "   "},
        {"kind": "memory", "type": "fact", "content": "x", "confidence": 1.5},
        {"kind": "message", "content": "no role"},
        {"kind": "memory", "type": "fact", "content": "a NUL \x00 byte PostgreSQL cannot store"},
    ):
        response = bulk(tenant, session, [*good, bad])
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"].startswith("invalid_")
    assert Item.objects.filter(layer=session).count() == 0
    assert bulk(tenant, session, good).status_code == 201
    assert Item.objects.filter(layer=session).count() == 3


def test_bulk_rejects_duplicate_external_ids_without_writing(tenant: Tenant, session: Layer) -> None:
    assert (
        bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "a", "external_id": "e1"}]).status_code
        == 201
    )
    clash = bulk(
        tenant,
        session,
        [
            {"kind": "memory", "type": "fact", "content": "b", "external_id": "e2"},
            {"kind": "memory", "type": "fact", "content": "c", "external_id": "e1"},
        ],
    )
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "duplicate_external_id"
    twice = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "b", "external_id": "e3"}] * 2)
    assert twice.status_code == 409
    assert Item.objects.filter(layer=session).count() == 1


def test_bulk_limits_the_batch_size(tenant: Tenant, session: Layer) -> None:
    response = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "x"}] * 1001)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_items"
    assert bulk(tenant, session, []).status_code == 400


def test_it_lists_items_by_layer_kind_and_type_with_pagination(tenant: Tenant, session: Layer) -> None:
    bulk(
        tenant,
        session,
        [{"kind": "memory", "type": "fact", "content": f"f{i}"} for i in range(5)]
        + [{"kind": "memory", "type": "entity", "content": "e"}],
    )
    page = tenant.client.get(f"/api/v1/items/?layer={session.pk}&kind=memory&type=fact&page_size=2").json()
    assert page["count"] == 5 and len(page["results"]) == 2 and page["next"]
    assert "embedding" not in page["results"][0] and page["results"][0]["embedded"] is False
    assert tenant.client.get("/api/v1/items/?layer=abc").json()["error"]["code"] == "invalid_layer"


def test_it_lists_items_without_n_plus_one(tenant: Tenant, session: Layer, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": f"f{i}"} for i in range(40)])
    with django_assert_max_num_queries(6):
        assert len(tenant.client.get(f"/api/v1/items/?layer={session.pk}").json()["results"]) == 40


def test_an_update_of_the_text_clears_the_embedding(tenant: Tenant, session: Layer) -> None:
    (item_id,) = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "old"}]).json()["ids"]
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert tenant.client.get(f"/api/v1/items/{item_id}/").json()["embedded"] is True
    assert tenant.client.patch(f"/api/v1/items/{item_id}/", {"importance": 0.9}, format="json").json()["embedded"]
    changed = tenant.client.patch(f"/api/v1/items/{item_id}/", {"content": "new text"}, format="json").json()
    assert changed["content"] == "new text" and changed["embedded"] is False and changed["importance"] == 0.9
    bad = tenant.client.patch(f"/api/v1/items/{item_id}/", {"importance": 7}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_importance"


def test_it_deletes_an_item(tenant: Tenant, session: Layer) -> None:
    (item_id,) = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "x"}]).json()["ids"]
    assert tenant.client.delete(f"/api/v1/items/{item_id}/").status_code == 204
    assert tenant.client.get(f"/api/v1/items/{item_id}/").status_code == 404
