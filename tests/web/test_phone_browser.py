"""The developer pages on a phone (390 px) in Chromium: the console's filters fold away behind one line, and
the tables whose deciding column would be off-screen (the trace's Decision, the preview's Why) become one
card per row with every cell on screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.web.harness import PHONE, check_page, login, new_page
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def billing(people: People) -> tuple[Layer, str]:
    """A project with more notes than a small budget holds, and one assembly on it (its trace id)."""
    workspace = people.developer.workspace
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = layer_create(workspace=workspace, kind="project", name="Billing", parent=root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="document", content=f"Billing note {n}: invoices for region {n} are sent in batches.")
            for n in range(12)
        ],
    )
    trace_id = context_assemble(
        workspace=workspace,
        params=ContextParams(layer_id=project.pk, query="when are invoices sent", token_budget=60, timeout_ms=0),
    ).trace_id
    return project, str(trace_id)


def on_screen(page: Page, selector: str) -> bool:
    """Every element matching `selector` lies within the viewport's width."""
    return bool(
        page.evaluate(
            """(selector) => [...document.querySelectorAll(selector)].every((el) => {
                 const box = el.getBoundingClientRect();
                 return box.width > 0 && box.left >= 0 && box.right <= document.documentElement.clientWidth + 0.5;
               })""",
            selector,
        )
    )


def test_the_consoles_filters_fold_away_on_a_phone_and_open_on_demand(
    people: People, billing: tuple[Layer, str], live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser, viewport=PHONE)
    login(page, live_server.url, people.developer, next_path="/console/")
    page.goto(f"{live_server.url}/console/")
    more = page.locator("#more-filters")
    expect(more).not_to_have_attribute("open", "")
    expect(page.get_by_label("Trace id (or its first characters) or query text")).to_be_visible()
    form_height = page.locator("form.filters").bounding_box()
    assert form_height is not None and form_height["height"] < 250, form_height  # was two screens
    expect(page.locator("#records table a").first).to_be_in_viewport()
    more.locator("summary").click()
    expect(more.locator("select").first).to_be_visible()
    check_page(page)

    # a filter that is set keeps them open, and the summary says how many are set
    page.goto(f"{live_server.url}/console/?layer={billing[0].pk}")
    expect(more).to_have_attribute("open", "")
    expect(more.locator("summary")).to_contain_text("1 set")
    # on a wide screen they are open as before
    wide = new_page(browser)
    login(wide, live_server.url, people.developer, next_path="/console/")
    expect(wide.locator("#more-filters")).to_have_attribute("open", "")


def test_the_traces_decision_and_the_previews_why_are_on_screen_at_390_px(
    people: People, billing: tuple[Layer, str], live_server: LiveServer, browser: Browser
) -> None:
    project, trace_id = billing
    page = new_page(browser, viewport=PHONE)
    login(page, live_server.url, people.developer, next_path="/console/")
    page.goto(f"{live_server.url}/console/traces/{trace_id}/")
    table = page.locator("#trace-table")
    expect(table).to_contain_text("did not fit the token budget")
    expect(table.locator("td[data-label='Decision']").first).to_be_visible()
    assert on_screen(page, "#trace-table td[data-label='Decision']")
    check_page(page)

    page.set_viewport_size(PHONE)
    page.goto(
        f"{live_server.url}/preview/?layer={project.pk}&query=when+are+invoices+sent&token_budget=60&timeout_ms=0"
    )
    page.locator("#overflow summary").click()
    expect(page.locator("#overflow-table td[data-label='Why']").first).to_be_visible()
    assert on_screen(page, "#overflow-table td[data-label='Why']")
    assert on_screen(page, "#chunk-table td")
    check_page(page)
