"""The pages: login, the layers tree, the workspace switcher (the preview: test_preview_page.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant

PASSWORD = "correct horse battery"


@pytest.fixture
def member(tenant: Tenant, django_user_model: type[AbstractUser]) -> AbstractUser:
    user = django_user_model.objects.create_user(username="ada", password=PASSWORD)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    return user


@pytest.fixture
def signed_in(client: Client, member: AbstractUser) -> Client:
    client.force_login(member)
    return client


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    org = layer_create(workspace=tenant.workspace, kind="org", name="Engineering", parent=tenant.root)
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=org, external_id="bill")
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Billing retries failed card payments three times."),
            ItemInput(kind="spec", type="requirement", content="Every invoice carries the customer's VAT number."),
        ],
    )
    return project


@pytest.mark.parametrize("url", ["/", "/layers/", "/preview/"])
def test_it_sends_anonymous_visitors_to_the_login_page(client: Client, db: None, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/login/?next={url}")


def test_it_signs_in_with_a_password_and_out_with_a_post(client: Client, member: AbstractUser) -> None:
    page = client.get("/login/")
    assert page.status_code == 200
    assert b'name="password"' in page.content

    signed_in = client.post("/login/", {"username": "ada", "password": PASSWORD})
    assert signed_in.status_code == 302
    assert signed_in["Location"] == "/"
    assert client.get("/").status_code == 200

    signed_out = client.post("/logout/")
    assert signed_out.status_code == 302
    assert signed_out["Location"] == "/login/"
    assert client.get("/").status_code == 302


def test_it_refuses_a_wrong_password(client: Client, member: AbstractUser) -> None:
    response = client.post("/login/", {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert b'role="alert"' in response.content


def test_it_lists_the_workspace_layers_as_a_tree_with_item_counts(signed_in: Client, project: Layer) -> None:
    response = signed_in.get("/layers/")
    assert response.status_code == 200
    rows = response.context["rows"]
    assert [(row.kind, row.name, row.depth) for row in rows] == [
        ("company", "acme", 0),
        ("org", "Engineering", 1),
        ("project", "Billing", 2),
    ]
    assert [row.item_count for row in rows] == [0, 0, 3]
    html = response.content.decode()
    assert "<code>bill</code>" in html
    assert f'href="/preview/?layer={project.pk}"' in html


def test_it_lists_layers_in_the_same_number_of_queries_however_many_there_are(
    signed_in: Client, tenant: Tenant
) -> None:
    def count_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert signed_in.get("/layers/").status_code == 200
        return len(queries)

    signed_in.get("/layers/")  # the first visit stores the chosen workspace in the session
    few = count_queries()
    for index in range(12):
        team = layer_create(workspace=tenant.workspace, kind="team", name=f"Team {index}", parent=tenant.root)
        items_create(layer=team, items=[ItemInput(kind="document", content=f"Team {index} charter.")])
    assert count_queries() == few
    assert few <= 4  # session, user, workspaces with the user's roles, layers with their counts


def test_it_switches_workspace_with_a_post_and_remembers_it(
    signed_in: Client, member: AbstractUser, other_tenant: Tenant
) -> None:
    assert signed_in.get("/layers/").context["workspace"].slug == "acme"
    Membership.objects.create(workspace=other_tenant.workspace, user=member, role=Role.OPERATOR)

    switched = signed_in.post("/workspace/", {"workspace": "globex", "next": "/layers/"})
    assert switched.status_code == 302
    assert switched["Location"] == "/layers/"
    page = signed_in.get("/layers/")
    assert page.context["workspace"].slug == "globex"
    assert [row.name for row in page.context["rows"]] == ["globex"]
    assert b'name="workspace"' in page.content  # the switcher shows for members of several
    assert signed_in.get("/preview/").context["workspace"].slug == "globex"


def test_it_never_switches_workspace_on_a_get(signed_in: Client, member: AbstractUser, other_tenant: Tenant) -> None:
    assert signed_in.get("/layers/").context["workspace"].slug == "acme"
    Membership.objects.create(workspace=other_tenant.workspace, user=member, role=Role.OPERATOR)
    assert signed_in.get("/layers/?workspace=globex").context["workspace"].slug == "acme"
    assert signed_in.get("/workspace/?workspace=globex").status_code == 405
    assert signed_in.get("/layers/").context["workspace"].slug == "acme"


def test_it_never_switches_to_a_workspace_the_user_is_not_a_member_of(signed_in: Client, other_tenant: Tenant) -> None:
    assert signed_in.post("/workspace/", {"workspace": "globex"}).status_code == 404
    response = signed_in.get("/layers/")
    assert response.context["workspace"].slug == "acme"
    assert b"globex" not in response.content


def test_it_tells_a_user_without_a_workspace_how_to_get_one(
    client: Client, db: None, django_user_model: type[AbstractUser]
) -> None:
    client.force_login(django_user_model.objects.create_user(username="loner", password=PASSWORD))
    for url in ("/", "/preview/"):
        response = client.get(url)
        assert response.status_code == 200
        assert b"No workspace yet" in response.content
