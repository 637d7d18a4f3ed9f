"""Creating a workspace from the pages: staff and superusers only, with its company layer, its creator as admin."""

from __future__ import annotations

from django.test import Client

from apps.layers.models import Layer
from apps.workspaces.models import ApiKey, Membership, Role, Workspace
from apps.workspaces.selectors import api_key_get_active
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People
from tests.web.shown_once import shown_secret


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_it_creates_a_workspace_with_its_company_layer_and_switches_to_it(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")  # staff, operator of acme
    assert "New workspace" in client.get("/layers/").content.decode()
    created = client.post("/workspace/new/", {"name": "Initech", "slug": "initech"})
    assert created.status_code == 200 and "no-store" in created["Cache-Control"]  # the first key, shown once
    workspace = Workspace.objects.get(slug="initech")
    key = ApiKey.objects.get(workspace=workspace)
    assert api_key_get_active(secret=shown_secret(created.content.decode())) == key
    assert all(key.prefix not in morsel.value for morsel in client.cookies.values())
    response = client.get("/layers/")
    assert response.context["workspace"] == workspace  # switched
    (root,) = Layer.objects.filter(workspace=workspace)
    assert root.kind == "company" and root.name == "Initech"
    assert f'href="/layers/{root.pk}/"' in response.content.decode()
    assert Membership.objects.get(workspace=workspace, user__username="otto").role == Role.ADMIN
    assert Membership.objects.get(workspace=tenant.workspace, user__username="otto").role == Role.OPERATOR


def test_it_shows_every_error_at_once_and_creates_nothing(people: People, tenant: Tenant) -> None:
    client = signed_in("root")
    response = client.post("/workspace/new/", {"name": "x" * 201, "slug": "not a slug"})
    assert response.status_code == 422
    assert set(response.context["form"].errors) == {"name", "slug"}
    taken = client.post("/workspace/new/", {"name": "Acme again", "slug": tenant.workspace.slug})
    assert taken.status_code == 422 and "already exists" in taken.content.decode()
    assert Workspace.objects.count() == 2


def test_it_lets_only_staff_and_superusers_create_one(people: People) -> None:
    for username in ("vera", "ada"):  # a viewer, and a workspace admin who is not staff
        client = signed_in(username)
        assert "New workspace" not in client.get("/").content.decode()
        assert client.get("/workspace/new/").status_code == 403
        assert client.post("/workspace/new/", {"name": "Mine", "slug": "mine"}).status_code == 403
    assert not Workspace.objects.filter(slug="mine").exists()
    assert Client().get("/workspace/new/").status_code == 302  # to the login page
