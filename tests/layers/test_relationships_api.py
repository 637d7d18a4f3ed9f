"""Relationships over the API: both ends in the key's workspace, no self or duplicate edge, list and delete."""

from __future__ import annotations

import pytest

from apps.layers.models import Relationship
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def items_of(t: Tenant, *texts: str) -> list[int]:
    created = items_create(layer=t.root, items=[ItemInput(kind="memory", type="fact", content=x) for x in texts])
    return [item.pk for item in created]


def test_it_relates_two_items_and_lists_and_deletes_the_edge(tenant: Tenant) -> None:
    a, b = items_of(tenant, "Invoices go out nightly.", "The biller runs at two.")
    made = tenant.client.post("/api/v1/relationships/", {"source": a, "target": b, "kind": "supports"}, format="json")
    assert made.status_code == 201
    body = made.json()
    assert (body["source"], body["target"], body["kind"], body["weight"]) == (a, b, "supports", 1.0)
    listed = tenant.client.get(f"/api/v1/relationships/?item={b}").json()
    assert [edge["id"] for edge in listed["results"]] == [body["id"]]
    assert tenant.client.get("/api/v1/relationships/?kind=contradicts").json()["results"] == []
    assert tenant.client.delete(f"/api/v1/relationships/{body['id']}/").status_code == 204
    assert not Relationship.objects.exists()


def test_it_refuses_what_the_pages_refuse_with_stable_codes(tenant: Tenant, other_tenant: Tenant) -> None:
    a, b = items_of(tenant, "One.", "Two.")
    (theirs,) = items_of(other_tenant, "Theirs.")

    def post(**body: object) -> tuple[int, str]:
        response = tenant.client.post("/api/v1/relationships/", body, format="json")
        return response.status_code, response.json()["error"]["code"]

    assert post(source=a, target=theirs, kind="relates_to") == (404, "item_not_found")
    assert post(source=theirs, target=a, kind="relates_to") == (404, "item_not_found")
    assert post(source=a, target=a, kind="relates_to") == (400, "invalid_target")
    assert post(source=a, target=b, kind="loves")[0] == 400
    assert post(source=a, target=b, kind="supports", weight=2)[0] == 400
    assert (
        tenant.client.post(
            "/api/v1/relationships/", {"source": a, "target": b, "kind": "supports"}, format="json"
        ).status_code
        == 201
    )
    assert post(source=a, target=b, kind="supports") == (409, "duplicate_relationship")
    assert tenant.client.get(f"/api/v1/relationships/?item={theirs}").status_code == 404
    edge = Relationship.objects.get()
    assert other_tenant.client.delete(f"/api/v1/relationships/{edge.pk}/").status_code == 404
    assert other_tenant.client.get("/api/v1/relationships/").json()["results"] == []
