"""Repeated items over the API: exact repeats merged on write, near repeats once embedded, `keep` keeps both."""

from __future__ import annotations

import pytest

from apps.layers.embedder import items_embed_pending
from apps.layers.models import EmbeddingClaim, Item, Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    body = tenant.client.post(
        "/api/v1/layers/", {"kind": "project", "name": "Billing", "parent": tenant.root.pk}, format="json"
    ).json()
    return Layer.objects.get(pk=body["id"])


def post(t: Tenant, layer: Layer, **fields: object):  # type: ignore[no-untyped-def]
    return t.client.post(
        "/api/v1/items/", {"layer": layer.pk, "kind": "memory", "type": "fact", **fields}, format="json"
    )


def test_it_merges_an_exact_repeat_into_the_stored_item(tenant: Tenant, project: Layer) -> None:
    first = post(tenant, project, content="Invoices are sent on the 1st.", external_id="crm-1", source_refs=["crm"])
    assert first.status_code == 201 and first.json()["seen_count"] == 1
    again = post(tenant, project, content="Invoices are sent on the 1st.", external_id="mail-7", source_refs=["mail"])
    assert again.status_code == 200, again.json()
    body = again.json()
    assert body["id"] == first.json()["id"]
    assert body["seen_count"] == 2 and body["merged_external_ids"] == ["mail-7"]
    assert body["source_refs"] == ["crm", "mail"] and body["external_id"] == "crm-1"
    assert Item.objects.filter(layer=project).count() == 1
    listed = tenant.client.get("/api/v1/items/", {"layer": project.pk}).json()["results"]
    assert [(i["id"], i["seen_count"]) for i in listed] == [(body["id"], 2)]


def test_keep_stores_a_repeat_apart(tenant: Tenant, project: Layer) -> None:
    first = post(tenant, project, content="Invoices are sent on the 1st.").json()
    kept = post(tenant, project, content="Invoices are sent on the 1st.", on_duplicate="keep")
    assert kept.status_code == 201 and kept.json()["id"] != first["id"]
    assert Item.objects.filter(layer=project).count() == 2
    third = post(tenant, project, content="Invoices are sent on the 1st.")  # merges into the mergeable one
    assert third.status_code == 200 and third.json()["id"] == first["id"] and third.json()["seen_count"] == 2
    bad = post(tenant, project, content="x", on_duplicate="drop")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_on_duplicate"


def test_bulk_merges_repeats_within_the_request_and_against_stored_items(tenant: Tenant, project: Layer) -> None:
    stored = post(tenant, project, content="The VAT rate is 20%.").json()
    items = [
        {"kind": "memory", "type": "fact", "content": "The VAT rate is 20%."},
        {"kind": "memory", "type": "fact", "content": "Refunds take 5 days.", "external_id": "r-1"},
        {"kind": "memory", "type": "fact", "content": "Refunds take 5 days.", "external_id": "r-2"},
        {"kind": "memory", "type": "decision", "content": "Refunds take 5 days."},  # another type: its own item
        {"kind": "message", "role": "user", "content": "ok"},
        {"kind": "message", "role": "user", "content": "ok"},  # turns are never merged
    ]
    response = tenant.client.post("/api/v1/items/bulk/", {"layer": project.pk, "items": items}, format="json")
    assert response.status_code == 201, response.json()
    ids, merged = response.json()["ids"], response.json()["merged"]
    assert merged == [0, 2]
    assert ids[0] == stored["id"] and ids[1] == ids[2] and len(set(ids)) == 5
    refunds = Item.objects.get(pk=ids[1])
    assert refunds.seen_count == 2 and refunds.external_id == "r-1" and refunds.merged_external_ids == ["r-2"]
    assert Item.objects.get(pk=stored["id"]).seen_count == 2


def test_a_near_repeat_is_merged_once_embedded_but_not_another_figure(tenant: Tenant, project: Layer) -> None:
    first = post(tenant, project, content="Database backups are kept for 35 days.").json()
    items_embed_pending(workspace_id=tenant.workspace.pk)
    near = post(tenant, project, content="Backups of the database are retained for 35 days.", external_id="w-3")
    other = post(tenant, project, content="Database backups are kept for 90 days.")
    kept = post(tenant, project, content="Backups of the database are kept for 35 days!", on_duplicate="keep")
    assert near.status_code == other.status_code == kept.status_code == 201  # no exact repeat
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert not Item.objects.filter(pk=near.json()["id"]).exists()
    merged = tenant.client.get(f"/api/v1/items/{first['id']}/").json()
    assert merged["seen_count"] == 2 and merged["merged_external_ids"] == ["w-3"]
    assert Item.objects.filter(pk__in=[other.json()["id"], kept.json()["id"]]).count() == 2


def test_a_near_repeat_embedded_before_the_item_it_repeats_is_merged_into_it(tenant: Tenant, project: Layer) -> None:
    # Concurrent embedding runners (or a newest-first backlog) can store the repeat's vector first; the
    # older item's vector, stored later, must still find it.
    first = post(tenant, project, content="Database backups are kept for 35 days.", external_id="w-1").json()
    near = post(tenant, project, content="Backups of the database are retained for 35 days.", external_id="w-3")
    assert near.status_code == 201
    lease = EmbeddingClaim.objects.create(item_id=first["id"], claimed_until="2999-01-01T00:00:00Z")  # another runner
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert Item.objects.get(pk=near.json()["id"]).embedding is not None
    assert Item.objects.get(pk=first["id"]).embedding is None
    lease.delete()
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert not Item.objects.filter(pk=near.json()["id"]).exists()
    merged = tenant.client.get(f"/api/v1/items/{first['id']}/").json()
    assert merged["seen_count"] == 2 and merged["merged_external_ids"] == ["w-3"]


def test_a_merged_repeat_keeps_the_higher_priority_and_importance(tenant: Tenant, project: Layer) -> None:
    fields = {"kind": "package", "type": "research", "content": "The retry storm came from the payment queue."}
    first = post(tenant, project, **fields, priority="low", importance=0.2)
    assert first.status_code == 201, first.json()
    again = post(tenant, project, **fields, priority="critical", importance=0.9)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert (again.json()["priority"], again.json()["importance"]) == ("critical", 0.9)
    lower = post(tenant, project, **fields, priority="medium", importance=0.5)  # a lower repeat lowers nothing
    assert (lower.json()["priority"], lower.json()["importance"], lower.json()["seen_count"]) == ("critical", 0.9, 3)
