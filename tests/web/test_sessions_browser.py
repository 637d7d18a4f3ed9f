"""The session page of a real 509-turn chat (LoCoMo conv-49, 45 agent requests) in Chromium: short and light
at 1440 px, its assemblies and messages paged and searched by htmx, what was in context at a turn one
click away, the chart windowed, the graph one line, axe-clean and nothing sideways at 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from tests.support.tenants import Tenant
from tests.web.harness import DESKTOP, check_page, login, new_page
from tests.web.locomo_chat import LocomoChat, locomo_chat_create
from tests.web.people import People
from tests.web.sessions_data import agent_requests

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAX_HEIGHT_PX = 2000
MAX_HTML_BYTES = 150_000


@pytest.fixture
def long_chat(people: People, tenant: Tenant) -> LocomoChat:
    chat = locomo_chat_create(workspace=tenant.workspace, parent=tenant.root)
    agent_requests(workspace=tenant.workspace, chat=chat, count=45)
    return chat


def test_a_500_turn_session_fits_one_screenful_and_pages_its_turns(
    people: People, long_chat: LocomoChat, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    url = f"{live_server.url}/sessions/{long_chat.layer.pk}/"
    response = page.goto(url)
    assert response is not None
    size = len(response.body())
    height = page.evaluate("document.documentElement.scrollHeight")
    assert size < MAX_HTML_BYTES, f"{size} bytes of HTML"
    assert height < MAX_HEIGHT_PX, f"{height} px tall at 1440 px"
    head = page.locator(".page-head")
    expect(head).to_contain_text(f"{long_chat.turns} messages")  # 509, not the 300 drawn before
    expect(head).to_contain_text("45 assemblies")
    expect(page.locator("#graph")).to_contain_text("One line")
    assert page.locator("#graph svg .lane").count() == 1
    assert page.locator("#graph svg circle").count() < 20  # the pinned or important only, never one per turn

    # the messages: ten at a time, newest first, paged and searched without leaving the page
    rows = page.locator("#graph-messages tbody tr")
    expect(rows).to_have_count(10)
    expect(rows.first.locator("td").first).to_have_text(str(long_chat.turns))
    page.locator("#messages").get_by_role("link", name="Older →").click()
    expect(page.locator("#messages")).to_contain_text("Page 2 of 51")
    expect(page).to_have_url(f"{url}?page=2")
    page.get_by_label("Search the messages").fill("painting")
    page.locator("#messages").get_by_role("button", name="Search").click()
    expect(page.locator("#messages h2")).to_contain_text("of 509")
    for text in rows.locator("td.one-line").all_inner_texts():
        assert "painting" in text.lower() or text.endswith("…")

    # the assemblies: ten a page; "In context" opens what that assembly injected, in place
    assemblies = page.locator("#turns tbody tr")
    expect(assemblies).to_have_count(10)
    expect(assemblies.first.locator("td").first).to_have_text("45")
    page.locator("#assemblies").get_by_role("link", name="Older →").click()
    expect(page.locator("#assemblies")).to_contain_text("Page 2 of 5")
    expect(assemblies.first.locator("td").first).to_have_text("35")
    assemblies.first.get_by_role("link", name="items").click()
    panel = page.locator("#turn-context")
    expect(panel.get_by_role("heading", level=2)).to_have_text("In context at turn 35")
    expect(panel).to_contain_text("message: ")
    expect(panel).to_contain_text("Since the turn before")

    # the chart: 50 turns at a time by default, zoomed to 25 with an overview of all 45
    expect(page.locator("#trajectory")).to_contain_text("Turns 1 to 45 of 45")
    page.locator("#trajectory").get_by_role("link", name="25", exact=True).click()
    expect(page.locator("#trajectory")).to_contain_text("Turns 21 to 45 of 45")
    expect(page.locator("#trajectory svg.overview")).to_be_visible()
    assert page.locator("#trajectory svg.timeline .bar-link").count() == 25
    page.locator("#trajectory").get_by_role("link", name="← Older").click()
    expect(page.locator("#trajectory")).to_contain_text("Turns 1 to 20 of 45")

    page.set_viewport_size(DESKTOP)
    check_page(page)
