"""The operator settles a proposed supersession in Chromium: the layer page lists it, Accept swaps the
list in place, and the older item is marked superseded by the newer one."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer, SupersessionProposal
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def proposed(people: People, tenant: Tenant) -> tuple[Layer, Item, Item]:
    """A layer where the detector proposed that a newer fact supersedes an older one (written and
    embedded before the browser starts)."""
    layer = layer_create(workspace=tenant.workspace, kind="project", name="People", parent=tenant.root)
    (old,) = items_create(layer=layer, items=[ItemInput(kind="memory", type="fact", content="Alice lives in Paris.")])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    (new,) = items_create(layer=layer, items=[ItemInput(kind="memory", type="fact", content="Alice moved to Berlin.")])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert SupersessionProposal.objects.filter(old=old, new=new, state="pending").exists()
    return layer, old, new


def test_an_operator_accepts_a_proposed_supersession(
    people: People, proposed: tuple[Layer, Item, Item], live_server: LiveServer, browser: Browser
) -> None:
    layer, old, new = proposed
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.goto(f"{live_server.url}/layers/{layer.pk}/")
    row = page.locator("#proposals-table tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Alice lives in Paris.")
    expect(row).to_contain_text("Alice moved to Berlin.")
    check_page(page)
    row.get_by_role("button", name="Accept").click()
    expect(page.locator("#layer-proposals [role=status]")).to_contain_text(f"#{new.pk} now supersedes #{old.pk}")
    expect(page.locator("#proposals-table")).to_have_count(0)
    assert page.url.endswith(f"/layers/{layer.pk}/")  # swapped in place
    page.reload()  # what was stored, read back through the page
    expect(page.locator(f"#item-{old.pk}")).to_contain_text(f"superseded by #{new.pk}")
    expect(page.locator(f"#item-{new.pk}")).not_to_contain_text("superseded")


def test_a_viewer_sees_proposals_without_a_way_to_decide(
    people: People, proposed: tuple[Layer, Item, Item], live_server: LiveServer, browser: Browser
) -> None:
    layer, _, _ = proposed
    page = new_page(browser)
    login(page, live_server.url, people.viewer)
    page.goto(f"{live_server.url}/layers/{layer.pk}/")
    expect(page.locator("#proposals-table tbody tr")).to_have_count(1)
    expect(page.get_by_role("button", name="Accept")).to_have_count(0)


def test_an_operator_decides_on_the_workspaces_supersessions_page(
    people: People, proposed: tuple[Layer, Item, Item], live_server: LiveServer, browser: Browser
) -> None:
    layer, old, new = proposed
    page = new_page(browser)
    login(page, live_server.url, people.operator)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Supersessions").click()
    expect(page).to_have_url(f"{live_server.url}/supersessions/")
    row = page.locator("#supersessions-table tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Alice lives in Paris.")
    expect(row).to_contain_text("Alice moved to Berlin.")
    expect(row).to_contain_text("rules")
    expect(row.get_by_role("link", name=layer.name)).to_have_attribute("href", f"/layers/{layer.pk}/#layer-proposals")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    row.get_by_role("button", name="Reject").click()
    expect(page.locator("#supersessions [role=status]")).to_contain_text(f"Kept #{old.pk} beside #{new.pk}")
    expect(page.locator("#supersessions-table")).to_have_count(0)
    assert page.url == f"{live_server.url}/supersessions/"  # swapped in place
    check_page(page)
    page.get_by_label("State").select_option("rejected")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#supersessions-table tbody tr")).to_contain_text("by user otto")
