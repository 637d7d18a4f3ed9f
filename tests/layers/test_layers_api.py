"""Layers over the API: hierarchy rules, external ids, configs with per-kind defaults."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.layers.models import Layer
from apps.summaries.models import LayerConfig
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def create(t: Tenant, **body: object):  # type: ignore[no-untyped-def]
    return t.client.post("/api/v1/layers/", body, format="json")


def test_it_creates_a_layer_under_a_higher_kind_and_skips_levels(tenant: Tenant) -> None:
    project = create(tenant, kind="project", name="Apollo", parent=tenant.root.pk)
    assert project.status_code == 201
    session = create(tenant, kind="session", name="s1", parent=project.json()["id"], external_id="sess-1")
    assert session.status_code == 201
    body = session.json()
    assert body["kind"] == "session" and body["parent"] == project.json()["id"] and body["external_id"] == "sess-1"
    config = LayerConfig.objects.get(layer_id=body["id"])
    assert (config.update_interval_seconds, config.update_on_changes, config.personalization) == (
        300,
        1,
        "highly_personalized",
    )


def test_it_rejects_a_parent_of_a_lower_or_equal_kind(tenant: Tenant) -> None:
    team = create(tenant, kind="team", name="t", parent=tenant.root.pk).json()
    response = create(tenant, kind="org", name="o", parent=team["id"])
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_parent"


def test_it_refuses_a_second_company_and_a_parentless_layer(tenant: Tenant) -> None:
    assert create(tenant, kind="company", name="again").json()["error"]["code"] == "company_exists"
    assert create(tenant, kind="team", name="orphan").json()["error"]["code"] == "invalid_parent"


def test_it_validates_fields_with_specific_codes(tenant: Tenant) -> None:
    response = create(tenant, kind="galaxy", name="x", parent=tenant.root.pk)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_kind"
    response = create(tenant, kind="team", name="x" * 201, parent=tenant.root.pk)
    assert response.json()["error"]["code"] == "invalid_name"
    response = create(tenant, kind="team", name="x", parent="abc")
    assert response.json()["error"]["code"] == "invalid_parent"


def test_it_keeps_external_ids_unique_per_kind(tenant: Tenant) -> None:
    assert create(tenant, kind="session", name="a", parent=tenant.root.pk, external_id="x").status_code == 201
    clash = create(tenant, kind="session", name="b", parent=tenant.root.pk, external_id="x")
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "duplicate_external_id"
    assert create(tenant, kind="project", name="c", parent=tenant.root.pk, external_id="x").status_code == 201


def test_it_lists_by_kind_and_external_id(tenant: Tenant) -> None:
    create(tenant, kind="session", name="a", parent=tenant.root.pk, external_id="s-a")
    create(tenant, kind="team", name="t", parent=tenant.root.pk)
    listed = tenant.client.get("/api/v1/layers/?kind=session&external_id=s-a").json()
    assert [layer["name"] for layer in listed["results"]] == ["a"]
    roots = tenant.client.get("/api/v1/layers/?kind=company").json()["results"]
    assert [layer["id"] for layer in roots] == [tenant.root.pk]


def test_it_renames_reparents_and_deletes_with_descendants(tenant: Tenant) -> None:
    team = create(tenant, kind="team", name="t", parent=tenant.root.pk).json()
    project = create(tenant, kind="project", name="p", parent=tenant.root.pk).json()
    moved = tenant.client.patch(f"/api/v1/layers/{project['id']}/", {"name": "P2", "parent": team["id"]}, format="json")
    assert moved.status_code == 200 and moved.json()["parent"] == team["id"] and moved.json()["name"] == "P2"
    assert tenant.client.delete(f"/api/v1/layers/{team['id']}/").status_code == 204
    assert not Layer.objects.filter(pk__in=[team["id"], project["id"]]).exists()


def test_it_never_deletes_the_company_root(tenant: Tenant) -> None:
    response = tenant.client.delete(f"/api/v1/layers/{tenant.root.pk}/")
    assert response.status_code == 400 and response.json()["error"]["code"] == "cannot_delete_root"


def test_it_validates_layer_configuration_on_save(tenant: Tenant) -> None:
    config = LayerConfig.objects.get(layer=tenant.root)
    config.update_interval_seconds = 5
    with pytest.raises(ValidationError):
        config.save()
    config.refresh_from_db()
    assert config.update_interval_seconds == 3600
