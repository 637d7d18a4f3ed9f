"""A profile's excluded items: every context assembled with the profile leaves them out, pinned or
not, with the trace reason `profile_excluded`; the API shows them; only an item of the profile's
workspace can be excluded, and twice is once."""

from __future__ import annotations

import pytest

from apps.core.errors import NotFound
from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create, profile_item_exclude
from tests.conftest import Tenant

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
