"""The operator's tasks in Chromium: a trigger change, an inline item edit with its errors, a relationship,
a new workspace; the viewer's read-only page."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Dialog, expect
from pytest_django.live_server_helper import LiveServer

from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.people import People

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


@pytest.fixture
def item(project: Layer) -> Item:
    """The project's item, read before the browser starts (see tests/web/harness.py)."""
    return Item.objects.get(layer=project)


@pytest.fixture
def related(project: Layer, tenant: Tenant) -> Item:
    """An item in another layer, to relate the project's item to."""
    team = layer_create(workspace=tenant.workspace, kind="team", name="Finance", parent=tenant.root)
    (policy,) = items_create(
        layer=team, items=[ItemInput(kind="memory", type="decision", content="Invoices are checked by two people.")]
    )
    return policy


def test_it_walks_the_operator_through_an_inline_item_edit_and_a_relationship(
    people: People, project: Layer, item: Item, related: Item, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/layers/{project.pk}/")
    row = page.locator(f"#item-{item.pk}")
    row.get_by_role("link", name=f"Edit item {item.pk}").click()
    editor = page.locator(f"#item-{item.pk}.editing")
    expect(editor.get_by_label("Content")).to_have_value("Invoices go out nightly.")
    expect(editor.get_by_label("Content")).to_be_focused()  # the keyboard lands in the editor
    assert page.url.endswith(f"/layers/{project.pk}/")  # swapped in place
    check_page(page)  # axe at 1440 px, then the open editor at 390 px
    page.set_viewport_size({"width": 1440, "height": 900})

    editor.get_by_label("Content").fill("  ")
    editor.get_by_label("Importance").fill("4")
    editor.get_by_role("button", name="Save item").click()
    expect(editor.locator(".field-error")).to_have_count(2)  # both at once, beside their fields
    expect(editor).to_contain_text("content must not be empty")
    expect(editor).to_contain_text("importance must be within [0, 1]")

    editor.get_by_label("Content").fill("Invoices go out every night at two.")
    editor.get_by_label("Importance").fill("0.9")
    editor.get_by_label("Pinned (always sent)").check()
    editor.get_by_role("button", name="Save item").click()
    expect(row).not_to_have_class("editing")
    expect(row).to_contain_text("every night at two")
    expect(row.locator("[role=status]")).to_have_text("saved")
    expect(row.get_by_role("link", name=f"Edit item {item.pk}")).to_be_focused()  # and back on the row
    expect(row).to_contain_text("pinned")
    # New text is embedded again in the background; the saved row asks until it is (every 3 s).
    expect(row.locator("td[data-label=State]")).to_contain_text("embedded", timeout=60_000)
    expect(row.locator(".badge.warn")).to_have_count(0)

    row.get_by_role("link", name=f"Edit item {item.pk}").click()
    # The editor is in and HTMX has taken it over (its autofocus ran) before anything is typed:
    # the full suite once submitted the id box empty ('This field is required') right after the
    # poll swapped the row, which a click in the swap's settle window can explain.
    expect(editor.get_by_label("Content")).to_be_focused()
    relations = page.locator(f"#item-{item.pk}-relations")
    relations.get_by_label("Other item id").fill(str(item.pk))
    expect(relations.get_by_label("Other item id")).to_have_value(str(item.pk))
    relations.get_by_role("button", name="Add relationship").click()
    expect(relations.locator(".field-error")).to_contain_text("cannot be related to itself")
    relations.get_by_label("Relationship").select_option("derived_from")
    relations.get_by_label("Other item id").fill(str(related.pk))
    relations.get_by_role("button", name="Add relationship").click()
    expect(relations.locator("li")).to_contain_text("checked by two people")
    expect(relations.get_by_role("link", name="Finance")).to_be_visible()
    page.get_by_role("link", name="Cancel").click()
    expect(row).to_contain_text("derived from")
    page.reload()  # read back through the page
    expect(row).to_contain_text("every night at two")
    row.get_by_role("link", name=f"#{related.pk}").click()
    expect(page.locator("h1")).to_contain_text("Finance")
    expect(page.locator(f"#item-{related.pk}")).to_contain_text(f"#{item.pk}")  # the other direction


def test_it_walks_a_staff_member_through_creating_a_workspace(
    people: People, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.get_by_role("link", name="+ New workspace").click()
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_label("Name").fill("Initech")
    page.get_by_label("Slug").fill("acme")  # taken: the tenant's slug
    page.get_by_role("button", name="Create workspace").click()
    expect(page.locator(".field-error")).to_contain_text("already exists")
    page.get_by_label("Slug").fill("initech")
    page.get_by_role("button", name="Create workspace").click()
    expect(page.locator("h1")).to_have_text("Workspace Initech created")
    expect(page.locator("#secret-panel")).to_contain_text("Shown once.")  # its first API key
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_role("link", name="Continue to Initech's layers").click()
    expect(page).to_have_url(f"{live_server.url}/layers/")
    expect(page.locator("#workspace-switch")).to_have_value("initech")
    page.get_by_role("link", name="Initech", exact=True).click()
    expect(page.locator("h1")).to_contain_text("Company")
    expect(page.locator("h1")).to_contain_text("Initech")


@pytest.fixture
def session_layer(project: Layer, tenant: Tenant) -> Layer:
    return layer_create(workspace=tenant.workspace, kind="session", name="Monday", parent=project)


def test_it_asks_before_deleting_a_layer(
    people: People, project: Layer, session_layer: Layer, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/layers/{session_layer.pk}/")
    delete = page.get_by_role("button", name="Delete this layer, its sub-layers and items")
    asked: list[str] = []

    def decline(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", decline)
    delete.click()
    page.wait_for_timeout(500)
    assert asked == ["Delete Monday with all its sub-layers and items? This cannot be undone."]
    assert page.url.endswith(f"/layers/{session_layer.pk}/")  # declined: nothing sent
    page.once("dialog", lambda dialog: dialog.accept())
    delete.click()
    expect(page).to_have_url(f"{live_server.url}/layers/{project.pk}/")
    expect(page.locator("#main, main").first).to_contain_text("deleted with its items")
    expect(page.get_by_role("link", name="Monday")).to_have_count(0)
