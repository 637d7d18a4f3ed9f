"""A workspace admin reads the audit trail in Chromium: reached from the sidebar, filtered in place over
HTMX, usable at 390 px and clean under axe."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.workspaces.audit import acting_as, record, user_actor
from apps.workspaces.models import AuditTarget
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def trail(people: People, tenant: Tenant) -> None:
    """A profile change by ada and an upstream key set by the system (written before the browser starts)."""
    with acting_as(user_actor(user_id=None, username="ada")):
        record(
            workspace_id=tenant.workspace.pk,
            target_kind=AuditTarget.PROFILE,
            action="update",
            target_id="qa",
            target_label="qa",
            old={"token_budget": 600, "format": "markdown"},
            new={"token_budget": 900, "format": "json"},
        )
    record(
        workspace_id=tenant.workspace.pk,
        target_kind=AuditTarget.UPSTREAM,
        action="create",
        target_id="openai",
        target_label="openai",
        new={"base_url": "https://api.example.com/v1/a/rather/long/path/that/must/wrap/on/a/phone", "key": "sk-x"},
    )


def test_an_admin_filters_the_audit_trail_in_place(
    people: People, trail: None, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.admin)
    page.get_by_role("link", name="Audit trail").click()
    expect(page).to_have_url(f"{live_server.url}/audit/")
    rows = page.locator("#audit-table tbody tr")
    expect(rows).to_have_count(3)  # and the workspace's first key, made with it
    expect(page.locator("#audit-table")).to_contain_text("•••• (set)")
    expect(page.locator("#audit-table")).not_to_contain_text("sk-x")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_label("Kind").select_option("profile")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("900")
    expect(page).to_have_url(f"{live_server.url}/audit/?kind=profile&actor=&action=&since=&until=&q=")
    expect(page.locator("form[role=search]")).to_have_count(1)  # swapped the list, not the page
    check_page(page)
