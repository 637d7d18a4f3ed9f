"""Access without the Django admin, walked in Chromium (issue 19): an admin invites a new person, who signs
up and sees only that workspace with the invited role; someone with an account signs in and accepts; a
developer opens the console of their workspace only. Every page axe-clean and narrow at 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant
from tests.web.harness import DESKTOP, PASSWORD, check_page, login, new_page, reading_back
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def invite(page: Page, base_url: str, *, role: str, note: str) -> str:
    """As the signed-in admin: make an invitation on Keys and members, copy its link from the panel."""
    page.goto(f"{base_url}/members/")
    form = page.locator("#invitations form")
    form.get_by_label("Role").select_option(role)
    form.get_by_label("For", exact=True).fill(note)
    form.get_by_role("button", name="Create an invitation link").click()
    panel = page.locator("#secret-panel")
    expect(panel).to_contain_text(f"Invitation link for {note}: {role}")
    panel.get_by_role("button", name="Copy").click()
    expect(page.locator("#secret-copied")).to_have_text("Copied to the clipboard.")
    copied = str(page.evaluate("() => navigator.clipboard.readText()"))
    assert copied == page.locator("#secret-value").input_value() and "/invite/inv_" in copied
    return copied


def test_an_admin_invites_a_new_person_who_signs_up_and_sees_only_that_workspace_with_the_invited_role(
    people: People, tenant: Tenant, live_server: LiveServer, browser: Browser
) -> None:
    admin = new_page(browser, permissions=["clipboard-read", "clipboard-write"])
    login(admin, live_server.url, people.admin)
    url = invite(admin, live_server.url, role="operator", note="Nina")
    check_page(admin)  # the page with its shown-once panel
    admin.set_viewport_size(DESKTOP)
    admin.goto(f"{live_server.url}/members/")
    expect(admin.locator("#invitations tbody")).to_contain_text("Nina")
    expect(admin.locator("#secret-panel")).to_have_count(0)

    nina = new_page(browser)  # another browser: nobody signed in
    nina.goto(url)
    expect(nina.locator("h1")).to_have_text(f"Join {tenant.workspace.name}")
    expect(nina.locator("#invitation")).to_contain_text("ada invites you")
    check_page(nina)
    nina.set_viewport_size(DESKTOP)
    nina.get_by_label("Username").fill("nina")
    nina.get_by_label("Password", exact=True).fill(PASSWORD)
    nina.get_by_label("Password confirmation").fill(PASSWORD)
    nina.get_by_role("button", name="Create my account and join").click()

    expect(nina).to_have_url(f"{live_server.url}/")
    expect(nina.locator(".messages")).to_contain_text(f"You joined {tenant.workspace.name} as operator.")
    expect(nina.locator("#workspace-switch")).to_have_count(0)  # one workspace: nothing to switch to
    expect(nina.locator(".sidebar .workspace-name")).to_have_text(tenant.workspace.name)
    expect(nina.locator(".account .role")).to_have_text("operator")
    expect(nina.get_by_role("link", name="Keys and members")).to_have_count(0)
    expect(nina.get_by_role("link", name="Console")).to_have_count(0)
    expect(nina.get_by_role("link", name="+ New workspace")).to_have_count(0)
    check_page(nina)

    admin.goto(f"{live_server.url}/members/")
    expect(admin.locator("#members")).to_contain_text("nina")
    expect(admin.locator("#invitations tbody")).not_to_contain_text("Nina")  # used: no longer waiting
    nina.goto(url)  # the link worked once
    expect(nina.locator("h1")).to_have_text("This invitation cannot be used")
    check_page(nina)
    with reading_back():
        assert Membership.objects.get(workspace=tenant.workspace, user__username="nina").role == Role.OPERATOR
        assert Membership.objects.filter(user__username="nina").count() == 1


def test_someone_with_an_account_elsewhere_signs_in_from_the_link_and_accepts(
    people: People, tenant: Tenant, other_tenant: Tenant, live_server: LiveServer, browser: Browser
) -> None:
    admin = new_page(browser, permissions=["clipboard-read", "clipboard-write"])
    login(admin, live_server.url, people.admin)
    url = invite(admin, live_server.url, role="developer", note="Olga")

    olga = new_page(browser)
    olga.goto(url)
    olga.get_by_role("link", name="Sign in").click()
    olga.fill("input[name=username]", "olga")
    olga.fill("input[name=password]", PASSWORD)
    olga.locator("form button[type=submit]").click()
    expect(olga).to_have_url(url)  # back on the invitation, signed in: nothing joined yet
    expect(olga.get_by_role("button", name="Join as olga")).to_be_visible()
    check_page(olga)
    olga.set_viewport_size(DESKTOP)
    olga.get_by_role("button", name="Join as olga").click()
    expect(olga.locator(".messages")).to_contain_text(f"You joined {tenant.workspace.name} as developer.")
    expect(olga.locator("#workspace-switch option")).to_have_text([tenant.workspace.name, other_tenant.workspace.name])
    expect(olga.locator(".account .role")).to_have_text("developer")
    expect(olga.get_by_role("link", name="Console")).to_be_visible()


@pytest.fixture
def traces(people: People, tenant: Tenant, other_tenant: Tenant) -> tuple[str, str]:
    """dana (a developer of acme) is also a viewer of globex; one assembly in each (made before the browser)."""
    Membership.objects.create(workspace=other_tenant.workspace, user_id=_user_id("dana"), role=Role.VIEWER)
    ours = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=tenant.root.pk, query="acme question", token_budget=200, timeout_ms=0),
    ).trace_id
    theirs = context_assemble(
        workspace=other_tenant.workspace,
        params=ContextParams(layer_id=other_tenant.root.pk, query="globex question", token_budget=200, timeout_ms=0),
    ).trace_id
    return ours, theirs


def test_a_developer_opens_the_console_of_their_workspace_only(
    people: People, other_tenant: Tenant, traces: tuple[str, str], live_server: LiveServer, browser: Browser
) -> None:
    """No staff flag: the developer role of acme opens acme's console, and nothing of globex's."""
    ours, theirs = traces
    page = new_page(browser)
    login(page, live_server.url, people.developer)
    page.get_by_role("link", name="Console").click()
    expect(page.locator("h1")).to_have_text("Assemblies")
    expect(page.locator("#records")).to_contain_text(ours[:8])
    expect(page.locator("#records")).not_to_contain_text(theirs[:8])
    check_page(page)
    page.set_viewport_size(DESKTOP)
    response = page.goto(f"{live_server.url}/console/traces/{theirs}/")
    assert response is not None and response.status == 404  # globex's trace is not in acme's console

    page.goto(f"{live_server.url}/layers/")
    page.locator("#workspace-switch").select_option(other_tenant.workspace.slug)
    expect(page.locator(".account .role")).to_have_text("viewer")
    expect(page.get_by_role("link", name="Console")).to_have_count(0)
    for path in ("/console/", f"/console/traces/{theirs}/", "/console/state/"):
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.status == 403, path
        expect(page.locator("main")).to_contain_text(f"An admin of {other_tenant.workspace.name} can give you")
    check_page(page)


def _user_id(username: str) -> int:
    from django.contrib.auth import get_user_model

    return int(get_user_model().objects.get(username=username).pk)
