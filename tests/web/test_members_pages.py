"""Keys and members: a workspace admin manages them; operators and viewers get 403; other workspaces 404."""

from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.workspaces.models import ApiKey, Membership, Role
from tests.conftest import Tenant
from tests.web.conftest import People
from tests.web.harness import PASSWORD, check_page, login, new_page


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_it_lets_a_workspace_admin_create_and_revoke_keys_and_set_roles(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")
    created = client.post("/members/keys/", {"name": "ci", "scopes": ["read"]}, follow=True)
    assert any("shown once" in str(m) for m in created.context["messages"])
    key = ApiKey.objects.get(workspace=tenant.workspace, name="ci")
    assert key.scopes == ["read"]
    assert client.post(f"/members/keys/{key.pk}/revoke/").status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert client.post("/members/set/", {"username": "vera", "role": "operator"}).status_code == 302
    assert Membership.objects.get(workspace=tenant.workspace, user__username="vera").role == Role.OPERATOR
    assert client.post("/members/set/", {"username": "nobody", "role": "viewer"}).status_code == 422


def test_it_keeps_operators_and_viewers_out_and_other_workspaces_apart(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    for username in ("vera", "otto"):
        client = signed_in(username)
        assert client.get("/members/").status_code == 403
        assert client.post("/members/keys/", {"name": "x", "scopes": ["read"]}).status_code == 403
        assert client.post("/members/set/", {"username": username, "role": "admin"}).status_code == 403
    theirs = ApiKey.objects.filter(workspace=other_tenant.workspace).first()
    assert theirs is not None
    assert signed_in("ada").post(f"/members/keys/{theirs.pk}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_it_never_leaves_a_workspace_without_an_admin(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")  # the only admin of acme
    demoted = client.post("/members/set/", {"username": "ada", "role": "operator"})
    assert demoted.status_code == 422 and b"last admin of" in demoted.content and b"(last_admin)" in demoted.content
    mine = Membership.objects.get(workspace=tenant.workspace, user__username="ada")
    removed = client.post(f"/members/{mine.pk}/remove/")
    assert removed.status_code == 409 and b'id="members-error"' in removed.content
    assert Membership.objects.get(pk=mine.pk).role == Role.ADMIN
    assert client.post("/members/set/", {"username": "otto", "role": "admin"}).status_code == 302
    assert client.post(f"/members/{mine.pk}/remove/").status_code == 302  # otto is admin now
    assert not Membership.objects.filter(pk=mine.pk).exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_keys_and_members_page_axe_clean_and_narrow(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.admin)
    page.get_by_role("link", name="Keys and members").click()
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    vera = page.locator("#members tr", has_text="vera")
    page.once("dialog", lambda dialog: dialog.dismiss())  # asks first; declined, nothing is sent
    vera.get_by_role("button", name="Remove").click()
    expect(vera).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    vera.get_by_role("button", name="Remove").click()
    expect(page.locator("#members")).not_to_contain_text("vera")

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#members tr", has_text="ada").get_by_role("button", name="Remove").click()
    expect(page.locator("#members-error")).to_contain_text("ada is the last admin of")
    check_page(page)
