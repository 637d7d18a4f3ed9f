"""The operator changes a profile's weights in Chromium: errors beside the fields, then saved; tries
unsaved weights on a query and compares two profiles."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Route, expect
from pytest_django.live_server_helper import LiveServer

from apps.layers.models import Layer
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.people import People
from tests.web.profiles_data import BUDGET, LUNCH, QUERY, billing_layer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def coder(people: People, tenant: Tenant) -> AgentProfile:
    return profile_create(workspace=tenant.workspace, name="coder", data=ProfileInput(token_budget=1500))


def test_it_walks_the_operator_through_a_weight_change(
    coder: AgentProfile, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/profiles/")
    page.get_by_role("link", name="coder").click()
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    page.get_by_label("Recency", exact=True).fill("-3")
    page.get_by_label("Token budget").fill("0")
    page.get_by_role("button", name="Save profile").click()
    expect(page.locator(".field-error")).to_have_count(2)
    expect(page.locator("[role=alert]")).to_contain_text("2 fields to correct")

    page.get_by_label("Recency", exact=True).fill("2")
    page.get_by_label("Token budget").fill("1800")
    page.get_by_role("button", name="Save profile").click()
    expect(page.locator(".messages")).to_contain_text("Profile coder saved")
    expect(page.get_by_label("Recency", exact=True)).to_have_value("2.0")
    expect(page.get_by_label("Token budget")).to_have_value("1800")


@pytest.fixture
def billing(people: People, tenant: Tenant, coder: AgentProfile) -> Layer:
    """The billing layer, coder at the tight budget and planner with importance 50 (before the browser)."""
    layer = billing_layer(tenant)
    coder.token_budget = BUDGET
    coder.save()
    profile_create(
        workspace=tenant.workspace,
        name="planner",
        data=ProfileInput(token_budget=BUDGET, ranking_weights={"importance": 50}),
    )
    return layer


def test_it_walks_the_operator_through_trying_and_comparing_profiles(
    billing: Layer, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/profiles/coder/")

    # Try a query with the saved settings: the same context on both sides.
    page.get_by_label("Layer to try on").select_option(label="· Project: Billing")
    page.get_by_label("Query to try").fill(QUERY)
    page.get_by_role("button", name="Try it").click()
    expect(page.locator("#try-result")).to_contain_text("Same context")

    # Change a weight, try again: the lunch note comes in, a fact goes, nothing is saved.
    page.get_by_label("Importance", exact=True).fill("50")
    page.get_by_role("button", name="Try it").click()
    result = page.locator("#try-result")
    expect(result).to_contain_text("1 added, 1 removed")
    expect(result.locator("tr.added")).to_contain_text(LUNCH)
    expect(result.locator("tr.removed")).to_have_count(1)
    expect(page.get_by_label("Importance", exact=True)).to_have_value("50")
    expect(page).to_have_url(f"{live_server.url}/profiles/coder/")  # an HTMX swap, not a navigation
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    # Compare with the planner (importance 50, saved): the same change, both totals shown.
    page.get_by_label("Other profile", exact=True).select_option("planner")
    page.get_by_label("Layer to compare on").select_option(label="· Project: Billing")
    page.get_by_label("Query to compare").fill(QUERY)
    page.get_by_role("button", name="Compare").click()
    outcome = page.locator("#compare-result")
    expect(outcome).to_contain_text("B (planner) against A (coder)")
    expect(outcome.locator("tr.added")).to_contain_text(LUNCH)
    expect(outcome.locator("tr.removed")).to_have_count(1)
    expect(outcome.locator(".side")).to_have_count(2)
    expect(outcome.locator(".side-chunks li.added")).to_contain_text(LUNCH)
    expect(page).to_have_url(re.compile(r"/profiles/coder/compare/\?other=planner&"))
    check_page(page)

    # The comparison's address is a shareable link: a reload shows it again.
    page.set_viewport_size({"width": 1440, "height": 900})
    page.reload()
    expect(page.locator("#compare-result")).to_contain_text("B (planner) against A (coder)")
    expect(page.get_by_label("Importance", exact=True)).to_have_value("")  # the tried weight was never saved


def test_a_viewer_tries_values_but_has_no_save_button(
    billing: Layer, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    page.goto(f"{live_server.url}/profiles/coder/")
    expect(page.get_by_role("button", name="Save profile")).to_have_count(0)
    page.get_by_label("Importance", exact=True).fill("-1")
    page.get_by_label("Query to try").fill(QUERY)
    page.get_by_role("button", name="Try it").click()
    expect(page.locator("[role=alert]")).to_contain_text("Not tried: 1 field to correct")
    expect(page.locator("#id_weight_importance-error")).to_be_visible()


def test_a_slow_try_or_compare_shows_progress_and_can_be_cancelled(
    billing: Layer, people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/profiles/coder/")
    held: list[Route] = []
    page.route("**/profiles/coder/try/", lambda route: held.append(route))  # the answer never comes
    page.get_by_label("Query to try").fill(QUERY)
    page.get_by_role("button", name="Try it").click()
    busy = page.locator("#try-busy")
    expect(busy).to_be_visible()
    expect(busy).to_contain_text("Assembling…")
    expect(page.get_by_role("button", name="Try it")).to_be_disabled()
    busy.get_by_role("button", name="Cancel").click()
    expect(busy).to_be_hidden()
    expect(page.locator("#try-status")).to_have_text("Cancelled: nothing was saved.")
    expect(page.get_by_role("button", name="Try it")).to_be_enabled()

    page.route("**/profiles/coder/compare/?*", lambda route: held.append(route))
    page.get_by_label("Query to compare").fill(QUERY)
    page.get_by_role("button", name="Compare").click()
    busy = page.locator("#compare-busy")
    expect(busy).to_contain_text("Assembling both…")
    busy.get_by_role("button", name="Cancel").click()
    expect(busy).to_be_hidden()
    expect(page.locator("#compare-status")).to_have_text("Cancelled: nothing was saved.")
    expect(page.get_by_role("button", name="Compare")).to_be_enabled()
    assert len(held) == 2
    for route in held:
        route.abort()
