"""The developer console: staff only, and only the workspaces the staff member can see."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.layers.services import ItemInput, items_create
from apps.workspaces.models import Membership, Role
from tests.conftest import Tenant


def assemble(tenant: Tenant, query: str) -> str:
    items_create(layer=tenant.root, items=[ItemInput(kind="document", content=f"Notes about {query}.")])
    result = context_assemble(workspace=tenant.workspace, params=ContextParams(layer_id=tenant.root.pk, query=query))
    return result.trace_id


@pytest.fixture
def staff(tenant: Tenant, django_user_model: type[AbstractUser]) -> AbstractUser:
    user = django_user_model.objects.create_user(username="grace", password="x" * 12, is_staff=True)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.ADMIN)
    return user


@pytest.mark.parametrize("url", ["/console/", "/console/traces/00000000-0000-0000-0000-000000000000/"])
def test_it_sends_anonymous_visitors_to_the_login_page(client: Client, db: None, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_forbids_members_who_are_not_staff(
    client: Client, tenant: Tenant, django_user_model: type[AbstractUser]
) -> None:
    user = django_user_model.objects.create_user(username="ada", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.ADMIN)
    trace_id = assemble(tenant, "billing")
    client.force_login(user)
    assert client.get("/console/").status_code == 403
    assert client.get(f"/console/traces/{trace_id}/").status_code == 403


def test_it_lists_recent_assemblies_of_the_staff_members_workspaces_only(
    client: Client, staff: AbstractUser, tenant: Tenant, other_tenant: Tenant
) -> None:
    mine = assemble(tenant, "billing")
    theirs = assemble(other_tenant, "shipping")
    client.force_login(staff)
    response = client.get("/console/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"/console/traces/{mine}/" in html
    assert theirs not in html
    assert client.get(f"/console/traces/{theirs}/").status_code == 404


def test_it_shows_a_trace_with_its_request_figures_and_decisions(
    client: Client, staff: AbstractUser, tenant: Tenant
) -> None:
    trace_id = assemble(tenant, "billing")
    client.force_login(staff)
    response = client.get(f"/console/traces/{trace_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="request-json"' in html
    assert "&quot;query&quot;: &quot;billing&quot;" in html  # pretty-printed and escaped
    assert 'id="trace-json"' in html
    record = AssemblyRecord.objects.get(trace_id=trace_id)
    assert record.trace, "the assembly kept no trace to show"
    assert json.loads(response.context["trace_json"]) == record.trace
    assert "\n  " in response.context["trace_json"]  # indented, not one long line


def test_it_shows_superusers_every_workspace(
    client: Client, tenant: Tenant, other_tenant: Tenant, django_user_model: type[AbstractUser]
) -> None:
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    ids = [assemble(tenant, "billing"), assemble(other_tenant, "shipping")]
    client.force_login(root)
    html = client.get("/console/").content.decode()
    assert all(f"/console/traces/{trace_id}/" in html for trace_id in ids)


def test_it_lists_assemblies_in_a_constant_number_of_queries(
    client: Client, staff: AbstractUser, tenant: Tenant, django_assert_max_num_queries: object
) -> None:
    for index in range(8):
        assemble(tenant, f"topic {index}")
    client.force_login(staff)
    client.get("/console/")  # the first page of a session also looks up where to land
    # session, user, workspaces, records, and the layout's workspace switcher (workspaces with roles)
    with django_assert_max_num_queries(5):  # type: ignore[operator]
        assert client.get("/console/").status_code == 200
