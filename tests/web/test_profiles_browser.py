"""The operator changes a profile's weights in Chromium: errors beside the fields, then saved."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create
from tests.conftest import Tenant
from tests.web.conftest import People
from tests.web.harness import check_page, login, new_page

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
