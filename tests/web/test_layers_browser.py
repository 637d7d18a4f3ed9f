"""The operator's task in Chromium: change a layer's trigger config, see every error inline, then save."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.conftest import Tenant
from tests.web.conftest import People
from tests.web.harness import check_page, login, new_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def project(people: People, tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="Invoices go out nightly.")])
    return project


def test_it_walks_the_operator_through_a_trigger_change(
    people: People, project: Layer, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/layers/")
    page.get_by_role("link", name="Billing", exact=True).click()
    expect(page.locator("h1")).to_contain_text("Billing")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    page.fill("#id_interval", "9")
    page.select_option("#id_interval_unit", "days")
    page.fill("#id_update_on_changes", "0")
    page.get_by_role("button", name="Save triggers").click()
    errors = page.locator("#layer-config .field-error")
    expect(errors).to_have_count(2)  # both at once, each beside its field
    expect(page.locator("#layer-config")).to_contain_text("between 1 minute and 7 days")
    assert page.url.endswith(f"/layers/{project.pk}/")  # swapped in place

    page.fill("#id_interval", "2")
    page.select_option("#id_interval_unit", "hours")
    page.fill("#id_update_on_changes", "5")
    page.get_by_role("button", name="Save triggers").click()
    expect(page.locator("#layer-config [role=status]")).to_contain_text("saved")
    page.reload()  # what was stored, read back through the page (no ORM once the browser runs)
    expect(page.locator("#id_interval")).to_have_value("2")
    expect(page.locator("#id_interval_unit")).to_have_value("hours")
    expect(page.locator("#id_update_on_changes")).to_have_value("5")


def test_it_shows_a_viewer_the_config_without_a_way_to_change_it(
    people: People, project: Layer, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    page.goto(f"{live_server.url}/layers/{project.pk}/")
    expect(page.locator("#id_interval")).to_be_disabled()
    expect(page.get_by_role("button", name="Save triggers")).to_have_count(0)
    expect(page.get_by_role("button", name="Add item")).to_have_count(0)
    check_page(page)
