"""The layout in a real Chromium: axe-clean and no sideways scroll at 390 px; an expired session mid-HTMX."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.models import AssemblyRecord
from tests.web.conftest import People
from tests.web.harness import check_page, login, new_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_keeps_the_layout_pages_axe_clean_and_narrow(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    for path in ("/", "/layers/", "/preview/", "/no/such/page/"):
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(f"{live_server.url}{path}")
        check_page(page)


def test_it_sends_an_expired_session_to_the_login_page_instead_of_swapping_it_in(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    page.goto(f"{live_server.url}/preview/")
    page.fill("textarea[name=query]", "anything")
    page.context.clear_cookies(name="sessionid")  # the session expires while the page is open
    page.get_by_role("button", name="Assemble").click()
    expect(page).to_have_url(f"{live_server.url}/login/?next=/preview/")
    assert page.locator(".sidebar").count() == 0  # a whole login page, not one nested in the preview


@pytest.fixture
def records(people: People) -> None:
    AssemblyRecord.objects.bulk_create(
        AssemblyRecord(
            workspace=people.viewer.workspace,
            request={},
            model="gpt-4o",
            encoding="o200k_base",
            tokens_used=100,
            token_budget=200,
            items_included=2,
            elapsed_ms=12.0,
        )
        for _ in range(3)
    )


def test_it_draws_the_dashboard_chart_from_the_vendored_library(
    people: People, records: None, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    expect(page.locator("#chart-rate .chart canvas")).to_be_visible()
    assert page.evaluate("typeof uPlot") == "function"
    check_page(page)
