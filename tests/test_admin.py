"""Django admin: every model has a changelist that loads, and the sensitive fields stay out of forms."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.layers.models import Item, Layer, Relationship
from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.models import LayerConfig
from apps.workspaces.models import ApiKey, Membership, Role, Workspace
from apps.workspaces.selectors import api_key_get_active
from tests.support.tenants import Tenant

OUR_MODELS = sorted(
    f"{model._meta.app_label}.{model._meta.model_name}"
    for model in admin.site._registry
    if model.__module__.startswith("apps.")
)


@pytest.fixture
def superuser_client(client: Client, django_user_model: type[AbstractUser], tenant: Tenant) -> Client:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="The sky is blue.")])
    context_assemble(workspace=tenant.workspace, params=ContextParams(layer_id=tenant.root.pk, query="sky"))
    client.force_login(django_user_model.objects.create_superuser(username="root", password="x" * 12))
    return client


def test_it_registers_every_model_of_every_app() -> None:
    expected = {
        "workspaces.workspace",
        "workspaces.membership",
        "workspaces.apikey",
        "layers.layer",
        "summaries.layerconfig",
        "layers.item",
        "layers.relationship",
        "summaries.summary",
        "profiles.agentprofile",
        "error_patterns.errorpattern",
        "assembly.assemblyrecord",
    }
    assert expected <= set(OUR_MODELS)


@pytest.mark.parametrize("label", OUR_MODELS)
def test_it_loads_each_changelist_for_a_superuser(superuser_client: Client, label: str) -> None:
    app_label, model_name = label.split(".")
    response = superuser_client.get(f"/admin/{app_label}/{model_name}/")
    assert response.status_code == 200


def test_it_never_puts_an_embedding_in_the_item_form(superuser_client: Client) -> None:
    item = Item.objects.get(content="The sky is blue.")
    response = superuser_client.get(f"/admin/layers/item/{item.pk}/change/")
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "embedding" not in form.fields
    assert "search_vector" not in form.fields


def test_it_edits_an_item_through_the_service_so_hash_and_tokens_follow(superuser_client: Client) -> None:
    item = Item.objects.get(content="The sky is blue.")
    old_hash = item.content_hash
    data = {
        "type": "fact",
        "title": "",
        "content": "The sky is blue, and the sea reflects it back.",
        "external_id": "",
        "created_at_0": item.created_at.strftime("%Y-%m-%d"),
        "created_at_1": item.created_at.strftime("%H:%M:%S"),
        "role": "",
        "task_ids": "",
        "confidence": "",
        "priority": "",
        "group_id": "",
        "agent_types": "",
        "source_refs": "",
        "importance": "0.5",
        "metadata": "{}",
    }
    response = superuser_client.post(f"/admin/layers/item/{item.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    item.refresh_from_db()
    assert item.content_hash != old_hash
    assert item.token_count > 5


def test_it_refuses_an_item_type_its_kind_does_not_take(superuser_client: Client) -> None:
    item = Item.objects.get(content="The sky is blue.")
    data = {
        "type": "requirement",
        "content": "x",
        "created_at_0": "2024-01-01",
        "created_at_1": "00:00:00",
        "importance": "0.5",
        "metadata": "{}",
    }
    response = superuser_client.post(f"/admin/layers/item/{item.pk}/change/", data)
    assert response.status_code == 200
    assert "type" in response.context["adminform"].form.errors


def test_it_shows_every_item_error_the_api_would_give_at_once(superuser_client: Client) -> None:
    item = Item.objects.get(content="The sky is blue.")
    data = {
        "type": "requirement",
        "content": "  ",
        "role": "user",
        "created_at_0": "2024-01-01",
        "created_at_1": "00:00:00",
        "importance": "3",
        "metadata": "{}",
    }
    response = superuser_client.post(f"/admin/layers/item/{item.pk}/change/", data)
    errors = response.context["adminform"].form.errors
    assert set(errors) == {"type", "content", "role", "importance"}
    assert errors["role"] == ["role and parent apply to messages only"]  # the service's words


def test_it_hides_the_key_hash_and_shows_a_new_secret_once(superuser_client: Client, tenant: Tenant) -> None:
    key = ApiKey.objects.get(workspace=tenant.workspace)
    page = superuser_client.get(f"/admin/workspaces/apikey/{key.pk}/change/")
    assert page.status_code == 200
    assert "key_hash" not in page.context["adminform"].form.fields
    assert key.key_hash not in page.content.decode()

    added = superuser_client.post(
        "/admin/workspaces/apikey/add/",
        {"workspace": tenant.workspace.pk, "name": "ci", "scopes": "read,admin"},
        follow=True,
    )
    assert added.status_code == 200
    notice = next(str(m) for m in added.context["messages"] if "copy it now" in str(m))
    secret = notice.split("The new key is ", 1)[1].split(" ", 1)[0]
    created = api_key_get_active(secret=secret)
    assert created is not None and created.name == "ci" and created.scopes == ["read", "admin"]


def test_it_creates_a_layer_through_the_service_with_its_config(superuser_client: Client, tenant: Tenant) -> None:
    data = {
        "workspace": tenant.workspace.pk,
        "kind": "team",
        "name": "Payments",
        "parent": tenant.root.pk,
        "external_id": "",
    }
    response = superuser_client.post("/admin/layers/layer/add/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    team = Layer.objects.get(workspace=tenant.workspace, name="Payments")
    assert team.external_id is None
    assert LayerConfig.objects.get(layer=team).update_interval_seconds == 3600


def test_it_refuses_a_layer_under_a_lower_kind_and_a_second_company(superuser_client: Client, tenant: Tenant) -> None:
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    under_session = {"workspace": tenant.workspace.pk, "kind": "project", "name": "P", "parent": session.pk}
    second_root = {"workspace": tenant.workspace.pk, "kind": "company", "name": "Again", "parent": ""}
    for data in (under_session, second_root):
        response = superuser_client.post("/admin/layers/layer/add/", data)
        assert response.status_code == 200
        assert response.context["adminform"].form.errors
    assert superuser_client.get(f"/admin/layers/layer/{tenant.root.pk}/delete/").status_code == 403


def test_it_keeps_staff_who_are_not_superusers_out_of_the_admin(
    client: Client, django_user_model: type[AbstractUser], tenant: Tenant, other_tenant: Tenant
) -> None:
    staff = django_user_model.objects.create_user(username="otto", password="x" * 12, is_staff=True)
    Membership.objects.create(workspace=tenant.workspace, user=staff, role=Role.ADMIN)
    client.force_login(staff)
    for url in (
        "/admin/",
        "/admin/profiles/agentprofile/",
        f"/admin/summaries/layerconfig/{other_tenant.root.config.pk}/change/",
        f"/admin/workspaces/workspace/{other_tenant.workspace.pk}/change/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
    posted = client.post(
        f"/admin/summaries/layerconfig/{other_tenant.root.config.pk}/change/", {"update_interval_seconds": 60}
    )
    assert posted.status_code == 302 and posted["Location"].startswith("/admin/login/")
    other_tenant.root.config.refresh_from_db()
    assert other_tenant.root.config.update_interval_seconds != 60


def test_it_refuses_in_the_admin_what_the_api_refuses_for_a_layer_config_all_errors_at_once(
    superuser_client: Client, tenant: Tenant
) -> None:
    config = tenant.root.config
    data = {
        "update_interval_seconds": "5",
        "update_on_changes": "0",
        "personalization": "highly_personalized",
        "skip_if_unchanged": "on",
    }
    response = superuser_client.post(f"/admin/summaries/layerconfig/{config.pk}/change/", data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {"update_interval_seconds", "update_on_changes", "personalization"}
    assert "organisation-wide" in errors["personalization"][0]
    api = tenant.client.put(
        f"/api/v1/layers/{tenant.root.pk}/config/", {"personalization": "highly_personalized"}, format="json"
    )
    assert api.status_code == 400 and api.json()["error"]["code"] == "invalid_personalization"
    config.refresh_from_db()
    assert config.personalization == "generic"


def test_it_saves_a_valid_layer_config_from_the_admin(superuser_client: Client, tenant: Tenant) -> None:
    config = tenant.root.config
    data = {"update_interval_seconds": "120", "update_on_changes": "4", "personalization": "generic"}
    response = superuser_client.post(f"/admin/summaries/layerconfig/{config.pk}/change/", data)
    assert response.status_code == 302
    config.refresh_from_db()
    assert (config.update_interval_seconds, config.update_on_changes, config.skip_if_unchanged) == (120, 4, False)


def test_it_creates_a_workspace_with_its_company_layer_from_the_admin(superuser_client: Client) -> None:
    response = superuser_client.post(
        "/admin/workspaces/workspace/add/",
        {"slug": "initech", "name": "Initech", "records_retention_days": 30, **EMPTY_MEMBERSHIPS},
        follow=True,
    )
    assert response.status_code == 200
    workspace = Workspace.objects.get(slug="initech")
    assert Layer.objects.filter(workspace=workspace, kind="company", parent=None).count() == 1
    assert ApiKey.objects.filter(workspace=workspace).count() == 1
    assert any("shown once" in str(message) for message in response.context["messages"])


EMPTY_MEMBERSHIPS = {
    "memberships-TOTAL_FORMS": "0",
    "memberships-INITIAL_FORMS": "0",
    "memberships-MIN_NUM_FORMS": "0",
    "memberships-MAX_NUM_FORMS": "1000",
}


def test_it_relates_items_in_the_admin_only_within_one_workspace(
    superuser_client: Client, tenant: Tenant, other_tenant: Tenant
) -> None:
    ours = Item.objects.get(content="The sky is blue.")
    (second,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Grass is green.")]
    )
    (theirs,) = items_create(layer=other_tenant.root, items=[ItemInput(kind="memory", type="fact", content="Theirs.")])
    url = "/admin/layers/relationship/add/"
    base = {"workspace": tenant.workspace.pk, "source": ours.pk, "kind": "supports", "weight": "1"}
    refused = superuser_client.post(url, {**base, "target": theirs.pk})
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["target"] == [f"item {theirs.pk} not found"]
    assert superuser_client.post(url, {**base, "target": second.pk}).status_code == 302
    again = superuser_client.post(url, {**base, "target": second.pk})
    assert "already supports" in str(again.context["adminform"].form.errors["target"])
    assert Relationship.objects.filter(workspace=tenant.workspace).count() == 1
