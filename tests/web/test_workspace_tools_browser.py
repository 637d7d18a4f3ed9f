"""The pages for what was API-only, walked in Chromium: an operator creates, edits and deletes a template
and a strategy, exports a session and imports it into another, recomputes its communities; an admin adds
an allow-list pattern (a bad one first: a form error). axe-clean and no sideways scroll at 390 px on each
page. One browser for the module's walks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.conversations.models import Community
from apps.layers.models import Layer
from apps.layers.services import layer_create
from tests.support.tenants import Tenant
from tests.web.harness import DESKTOP, check_page, login, new_page
from tests.web.people import People
from tests.web.sessions_data import Conversation, conversation_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def checked(page: Page) -> None:
    """axe at both widths and no sideways scroll at 390 px, then back to the desktop width."""
    check_page(page)
    page.set_viewport_size(DESKTOP)


def nav(page: Page, area: str) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name=area, exact=True).click()


@pytest.fixture
def chat(people: People, tenant: Tenant) -> Conversation:
    """A 61-message session with a task community, and a project to import into (before the browser)."""
    layer_create(workspace=tenant.workspace, kind="project", name="Archive", parent=tenant.root)
    return conversation_create(workspace=tenant.workspace, parent=tenant.root)


def test_the_operator_and_the_admin_do_their_tasks_in_the_pages(
    chat: Conversation, people: People, tenant: Tenant, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)

    # A template: errors beside their fields, then created, edited and deleted.
    nav(page, "Templates")
    checked(page)
    page.get_by_role("link", name="New template").click()
    page.get_by_label("Name", exact=True).fill("chat")
    page.get_by_label("Body", exact=True).fill("{content.__class__}")
    page.get_by_role("button", name="Create template").click()
    expect(page.locator("[role=alert]")).to_contain_text("2 fields to correct")
    expect(page.locator(".field-error")).to_have_count(2)
    checked(page)
    page.get_by_label("Name", exact=True).fill("terse")
    page.get_by_label("Body", exact=True).fill("- {content}")
    page.get_by_label("Type 1", exact=True).fill("decision")
    page.get_by_label("Body for type 1").fill("D: {content}")
    page.get_by_role("button", name="Create template").click()
    expect(page.locator(".messages")).to_contain_text("Template terse created")
    expect(page.get_by_label("Type 1", exact=True)).to_have_value("decision")
    page.get_by_label("Body", exact=True).fill("* {content}")
    page.get_by_role("button", name="Save template").click()
    expect(page.locator(".messages")).to_contain_text("Template terse saved")
    expect(page.get_by_label("Body", exact=True)).to_have_value("* {content}")
    checked(page)
    page.get_by_role("button", name="Delete this template").click()
    expect(page.locator(".messages")).to_contain_text("Template terse deleted")
    expect(page.locator("#templates")).to_have_count(0)

    # A strategy: added, edited, rated, deleted.
    nav(page, "Strategies")
    checked(page)
    page.get_by_label("Title").fill("Back off")
    page.get_by_label("Content").fill("Retry the payment call with exponential backoff.")
    page.get_by_label("Task group").last.fill("payments")
    page.get_by_role("button", name="Add strategy").click()
    expect(page.locator(".messages")).to_contain_text("added")
    page.get_by_label("Content").fill("Retry with backoff, at most 5 times.")
    page.get_by_role("button", name="Save strategy").click()
    expect(page.locator(".messages")).to_contain_text("saved")
    expect(page.get_by_label("Content")).to_have_value("Retry with backoff, at most 5 times.")
    page.get_by_role("button", name="Helpful", exact=True).click()
    expect(page.locator("#helpfulness-value")).to_have_text("0.60")  # one step (STRATEGY_FEEDBACK_STEP 0.1), swapped
    checked(page)
    page.get_by_role("button", name="Delete this strategy").click()
    expect(page.locator(".messages")).to_contain_text("deleted")
    expect(page.locator("#strategies")).to_have_count(0)

    # A session: exported from its page, imported under the project, its communities recomputed.
    nav(page, "Sessions")
    page.get_by_role("link", name=re.compile(chat.layer.name)).first.click()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download export").click()
    exported = download.value.path()
    Community.objects.filter(layer=chat.layer).delete()
    page.get_by_role("button", name="Recompute communities").click()
    expect(page.locator("#communities-recomputed")).to_contain_text("Communities recomputed: ")
    expect(page.locator("#graph details.communities")).to_have_count(1)
    checked(page)
    nav(page, "Sessions")
    checked(page)
    page.get_by_label("Put it under").select_option(label="· Project: Archive")
    page.get_by_label("Name", exact=True).fill("Copy of the chat")
    page.get_by_label("Export file").set_input_files(exported)
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".messages")).to_contain_text("Imported 61 messages into Copy of the chat")
    expect(page.locator("h1")).to_contain_text("Copy of the chat")
    assert Layer.objects.get(name="Copy of the chat").parent.name == "Archive"  # type: ignore[union-attr]
    page.context.close()

    # The admin: a pattern RE2 cannot run is a form error, a plain one is kept and the redactor keeps it.
    page = new_page(browser)
    login(page, live_server.url, people.admin)
    nav(page, "Redaction")
    checked(page)
    page.get_by_label("Kind").select_option("pattern")
    page.get_by_label("Value").fill(r"(?<=key )AKIA\w+")
    page.get_by_role("button", name="Add to the allow-list").click()
    expect(page.locator("#allowlist .field-error")).to_contain_text("RE2")
    checked(page)
    page.get_by_label("Value").fill(r"AKIA[0-9A-Z]{16}")
    page.get_by_label("Note").fill("AWS documentation examples")
    page.get_by_role("button", name="Add to the allow-list").click()
    expect(page.locator("#allowlist [role=status]")).to_contain_text("Added to the allow-list")
    expect(page.locator("#allowlist-entries")).to_contain_text("AKIA[0-9A-Z]{16}")
    page.get_by_label("Text to redact").fill("aws key AKIAIOSFODNN7EXAMPLE and password=hunter22")
    page.get_by_role("button", name="Redact").click()
    expect(page.locator("#redacted-text")).to_contain_text("AKIAIOSFODNN7EXAMPLE")
    expect(page.locator("#redacted-text")).not_to_contain_text("hunter22")
    checked(page)
