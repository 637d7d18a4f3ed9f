"""Keys and members: a workspace admin manages keys, members' roles and invitations; nobody is added by
username; operators and viewers get 403; other workspaces 404."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.workspaces.invitations import invitation_create
from apps.workspaces.models import ApiKey, Invitation, Membership, Role
from apps.workspaces.selectors import api_key_get_active, invitation_valid
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD, check_page, login, new_page
from tests.web.people import People
from tests.web.shown_once import shown_secret


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_a_new_keys_secret_is_shown_once_in_a_panel_no_cache_keeps(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")
    response = client.post("/members/keys/", {"name": "ci", "scopes": ["read"]})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    html = response.content.decode()
    secret = shown_secret(html)
    assert api_key_get_active(secret=secret) == ApiKey.objects.get(workspace=tenant.workspace, name="ci")
    assert "shown once" in html.lower() and 'data-copy-from="#secret-value"' in html
    assert all(secret not in morsel.value for morsel in client.cookies.values())  # not parked in a message cookie
    assert secret not in client.get("/members/").content.decode()  # and never again


def membership_of(tenant: Tenant, username: str) -> Membership:
    return Membership.objects.get(workspace=tenant.workspace, user__username=username)


def test_an_admin_cannot_add_an_existing_user_nor_learn_whether_a_username_exists(
    people: People, tenant: Tenant
) -> None:
    """Issue 26 #14: ada (admin of acme) added olga (globex) or root (the superuser) by typing their names,
    and the answer told a taken username from a free one."""
    client = signed_in("ada")
    answers = {
        name: client.post("/members/set/", {"username": name, "role": "admin"}) for name in ("olga", "root", "zed")
    }
    assert not Membership.objects.filter(workspace=tenant.workspace, user__username__in=["olga", "root"]).exists()

    def seen(name: str) -> tuple[int, str]:  # the answer as its reader sees it (CSRF tokens vary per page)
        html = re.sub(r"[A-Za-z0-9]{64}", "", answers[name].content.decode())
        return answers[name].status_code, html.replace(name, "")

    assert seen("olga") == seen("root") == seen("zed")
    page = client.get("/members/").content.decode()
    assert 'name="username"' not in page  # no form takes a username: people join by invitation


def test_it_lets_a_workspace_admin_create_and_revoke_keys_and_set_roles(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")
    assert client.post("/members/keys/", {"name": "ci", "scopes": ["read"]}).status_code == 200
    key = ApiKey.objects.get(workspace=tenant.workspace, name="ci")
    assert key.scopes == ["read"]
    assert client.post(f"/members/keys/{key.pk}/revoke/").status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    vera = membership_of(tenant, "vera")
    assert client.post(f"/members/{vera.pk}/role/", {"role": "developer"}).status_code == 302
    assert membership_of(tenant, "vera").role == Role.DEVELOPER
    assert client.post(f"/members/{vera.pk}/role/", {"role": "owner"}).status_code == 422
    assert membership_of(tenant, "vera").role == Role.DEVELOPER


def test_it_keeps_operators_and_viewers_out_and_other_workspaces_apart(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    mine = membership_of(tenant, "vera")
    for username in ("vera", "otto", "dana"):
        client = signed_in(username)
        assert client.get("/members/").status_code == 403
        assert client.post("/members/keys/", {"name": "x", "scopes": ["read"]}).status_code == 403
        assert client.post("/members/invitations/", {"role": "admin", "days": "7"}).status_code == 403
        assert client.post(f"/members/{mine.pk}/role/", {"role": "admin"}).status_code == 403
    assert not Invitation.objects.exists()
    theirs = ApiKey.objects.filter(workspace=other_tenant.workspace).first()
    assert theirs is not None
    ada = signed_in("ada")
    assert ada.post(f"/members/keys/{theirs.pk}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
    olga = Membership.objects.get(workspace=other_tenant.workspace, user__username="olga")
    assert ada.post(f"/members/{olga.pk}/role/", {"role": "viewer"}).status_code == 404
    assert ada.post(f"/members/{olga.pk}/remove/").status_code == 404
    their_invitation = invitation_create(workspace=other_tenant.workspace, role=Role.VIEWER).invitation
    assert ada.post(f"/members/invitations/{their_invitation.pk}/revoke/").status_code == 404
    assert Membership.objects.get(pk=olga.pk).role == Role.DEVELOPER
    assert Invitation.objects.get(pk=their_invitation.pk).revoked_at is None


def test_it_never_leaves_a_workspace_without_an_admin(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")  # the only admin of acme
    mine = membership_of(tenant, "ada")
    demoted = client.post(f"/members/{mine.pk}/role/", {"role": "operator"})
    assert demoted.status_code == 409 and b"last admin of" in demoted.content and b"(last_admin)" in demoted.content
    removed = client.post(f"/members/{mine.pk}/remove/")
    assert removed.status_code == 409 and b'id="members-error"' in removed.content
    assert Membership.objects.get(pk=mine.pk).role == Role.ADMIN
    otto = membership_of(tenant, "otto")
    assert client.post(f"/members/{otto.pk}/role/", {"role": "admin"}).status_code == 302
    assert client.post(f"/members/{mine.pk}/remove/").status_code == 302  # otto is admin now
    assert not Membership.objects.filter(pk=mine.pk).exists()


def test_an_admin_makes_an_invitation_link_shown_once_and_revokes_it(people: People, tenant: Tenant) -> None:
    client = signed_in("ada")
    made = client.post("/members/invitations/", {"role": "developer", "note": "Bob from QA", "days": "3"})
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    link = shown_secret(made.content.decode())
    assert link.startswith("http://testserver/invite/inv_")
    token = link.rstrip("/").rsplit("/", 1)[1]
    invitation = invitation_valid(token=token)
    assert invitation is not None and invitation.role == Role.DEVELOPER and invitation.created_by is not None
    assert all(token not in morsel.value for morsel in client.cookies.values())
    listed = client.get("/members/").content.decode()
    assert "Bob from QA" in listed and token not in listed
    bad = client.post("/members/invitations/", {"role": "owner", "days": "0"})
    assert bad.status_code == 422 and Invitation.objects.count() == 1
    assert client.post(f"/members/invitations/{invitation.pk}/revoke/").status_code == 302
    assert invitation_valid(token=token) is None
    assert "Bob from QA" not in client.get("/members/").content.decode()


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


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_new_key_is_copied_from_its_shown_once_panel(
    people: People, tenant: Tenant, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser, permissions=["clipboard-read", "clipboard-write"])
    login(page, live_server.url, people.admin, next_path="/members/")
    page.fill("input[name=name]", "deploy bot")
    page.get_by_role("button", name="Create a key").click()
    panel = page.locator("#secret-panel")
    expect(panel).to_contain_text("Key deploy bot created")
    secret = page.locator("#secret-value").input_value()
    panel.get_by_role("button", name="Copy").click()
    expect(page.locator("#secret-copied")).to_have_text("Copied to the clipboard.")
    assert page.evaluate("() => navigator.clipboard.readText()") == secret
    check_page(page)
    page.goto(f"{live_server.url}/members/")
    expect(page.locator("#secret-panel")).to_have_count(0)
    assert secret not in page.content()
