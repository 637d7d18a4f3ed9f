"""A profile's excluded items: every context assembled with the profile leaves them out, pinned or
not, with the trace reason `profile_excluded`; the API shows them; only an item of the profile's
workspace can be excluded, and twice is once."""

from __future__ import annotations

import pytest

from apps.core.errors import NotFound
from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.models import AgentProfile
from apps.profiles.services import (
    MAX_EXCLUDED_ITEMS,
    ProfileInput,
    profile_create,
    profile_item_exclude,
    profile_update,
)
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def profile(tenant: Tenant) -> AgentProfile:
    return profile_create(workspace=tenant.workspace, name="billing-bot", data=ProfileInput())


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Billing retries failed card payments three times."),
        ],
    )
    return project


def nightly(project: Layer) -> Item:
    return Item.objects.get(layer=project, content__startswith="Invoices are generated nightly")


def test_excluding_twice_keeps_one_entry_and_including_removes_it(profile: AgentProfile, project: Layer) -> None:
    item = nightly(project)
    profile_item_exclude(profile=profile, item=item)
    profile_item_exclude(profile=profile, item=item)
    profile.refresh_from_db()
    assert profile.excluded_items == [item.pk]
    profile_item_exclude(profile=profile, item=item, excluded=False)
    profile.refresh_from_db()
    assert profile.excluded_items == []


def test_the_service_refuses_an_item_of_another_workspace(profile: AgentProfile, other_tenant: Tenant) -> None:
    (foreign,) = items_create(
        layer=other_tenant.root, items=[ItemInput(kind="memory", type="fact", content="Their secret.")]
    )
    with pytest.raises(NotFound):
        profile_item_exclude(profile=profile, item=foreign)


def test_every_context_with_the_profile_leaves_its_excluded_items_out_pinned_ones_too(
    tenant: Tenant, project: Layer, profile: AgentProfile
) -> None:
    item = nightly(project)
    Item.objects.filter(pk=item.pk).update(pinned=True)
    profile_item_exclude(profile=profile, item=item)
    body = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": project.pk, "query": "invoices billing", "token_budget": 2000, "profile": profile.name},
        format="json",
    ).json()
    assert item.pk not in [c["id"] for c in body["chunks"] if c["source"] == "item"]
    (entry,) = [e for e in body["trace"] if e["source"] == "item" and e["id"] == item.pk]
    assert (entry["decision"], entry["reason"]) == ("excluded", "profile_excluded")
    assert tenant.client.get(f"/api/v1/profiles/{profile.name}/").json()["excluded_items"] == [item.pk]


def url(profile: AgentProfile) -> str:
    return f"/api/v1/profiles/{profile.name}/"


def test_the_api_sets_them_on_put_and_patch_and_keeps_them_when_left_out(
    tenant: Tenant, project: Layer, profile: AgentProfile
) -> None:
    item = nightly(project)
    other = Item.objects.get(layer=project, content__startswith="Billing retries")
    answer = tenant.client.patch(url(profile), {"excluded_items": [item.pk, other.pk, item.pk]}, format="json")
    assert answer.status_code == 200 and answer.json()["excluded_items"] == [item.pk, other.pk]  # a repeat is once
    answer = tenant.client.patch(url(profile), {"token_budget": 1500}, format="json")
    assert answer.json()["excluded_items"] == [item.pk, other.pk] and answer.json()["token_budget"] == 1500
    answer = tenant.client.put(url(profile), {"model": "gpt-4o"}, format="json")
    assert answer.json()["excluded_items"] == [item.pk, other.pk] and answer.json()["token_budget"] is None
    answer = tenant.client.put(url(profile), {"excluded_items": [other.pk]}, format="json")
    assert answer.json()["excluded_items"] == [other.pk] and answer.json()["model"] == ""
    profile.refresh_from_db()
    assert profile.excluded_items == [other.pk]
    assert tenant.client.get(url(profile)).json()["excluded_items"] == [other.pk]
    created = tenant.client.post("/api/v1/profiles/", {"name": "second", "excluded_items": [item.pk]}, format="json")
    assert created.status_code == 201 and created.json()["excluded_items"] == [item.pk]


def test_the_api_refuses_items_of_another_workspace_unknown_ids_and_more_than_the_cap(
    tenant: Tenant, other_tenant: Tenant, project: Layer, profile: AgentProfile
) -> None:
    (foreign,) = items_create(
        layer=other_tenant.root, items=[ItemInput(kind="memory", type="fact", content="Their secret.")]
    )
    item = nightly(project)
    answer = tenant.client.patch(url(profile), {"excluded_items": [item.pk, foreign.pk]}, format="json")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "item_not_found"
    assert answer.json()["error"]["details"] == {"excluded_items": [foreign.pk]}
    too_many = list(range(1, MAX_EXCLUDED_ITEMS + 2))
    answer = tenant.client.put(url(profile), {"excluded_items": too_many}, format="json")
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "too_many_excluded_items")
    for bad in (["x"], [0], "12", {"id": 1}):
        answer = tenant.client.patch(url(profile), {"excluded_items": bad}, format="json")
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "invalid_excluded_items"), bad
    answer = tenant.client.post("/api/v1/profiles/", {"name": "x", "excluded_items": [foreign.pk]}, format="json")
    assert answer.status_code == 404 and not AgentProfile.objects.filter(name="x").exists()
    profile.refresh_from_db()
    assert profile.excluded_items == []


def test_a_settings_put_keeps_an_item_excluded_meanwhile(tenant: Tenant, project: Layer, profile: AgentProfile) -> None:
    stale = AgentProfile.objects.get(pk=profile.pk)  # read before the click, as a PUT's view did
    profile_item_exclude(profile=profile, item=nightly(project))
    profile_update(profile=stale, name=stale.name, data=ProfileInput(token_budget=900))
    profile.refresh_from_db()
    assert profile.excluded_items == [nightly(project).pk] and profile.token_budget == 900
