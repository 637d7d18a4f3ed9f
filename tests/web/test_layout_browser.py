"""The layout in a real Chromium: axe-clean and no sideways scroll at 390 px; an expired session mid-HTMX."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.models import AssemblyRecord
from tests.web.harness import check_page, login, new_page
from tests.web.people import People

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


def test_it_sends_an_expired_session_filtering_the_console_to_the_login_page(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.developer, next_path="/console/")
    page.context.clear_cookies(name="sessionid")
    page.fill("input[name=q]", "invoices")
    page.get_by_role("button", name="Filter").click()  # an hx-get of the #records fragment
    expect(page).to_have_url(f"{live_server.url}/login/?next=/console/")  # the page they were on
    assert page.locator(".sidebar").count() == 0
    assert page.locator("#records").count() == 0


def test_it_styles_the_403_and_500_pages_axe_clean_and_narrow(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    broken = render_to_string("500.html")  # served by the handler when a view raises; routed in here
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    response = page.goto(f"{live_server.url}/members/")  # keys and members: workspace admins only
    assert response is not None and response.status == 403
    expect(page.locator("h1")).to_have_text("You may not do this here")
    expect(page.locator(".sidebar")).to_be_visible()
    check_page(page)

    page.set_viewport_size({"width": 1440, "height": 900})
    page.route(
        f"{live_server.url}/broken/", lambda route: route.fulfill(status=500, body=broken, content_type="text/html")
    )
    page.goto(f"{live_server.url}/broken/")
    expect(page.locator("h1")).to_have_text("Something broke on our side")
    assert (
        page.evaluate("getComputedStyle(document.querySelector('.error-page')).display") != "inline"
    )  # app.css applied
    check_page(page)


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
