"""An operator's walk in Chromium over a real 509-turn chat (LoCoMo conv-49, every turn embedded): on the
preview of "What kind of car does Evan drive?" with an agent profile, from the chunks themselves they
pin one (it goes first), exclude one from the profile and let it in again, lower one's importance and
open one's item; each result is said in the live region and the focus stays on the chunk acted on. At
390 px the actions fit; axe stays clean. A viewer sees the same chunks with their links and no action.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.core import background
from apps.profiles.services import ProfileInput, profile_create
from tests.support.tenants import Tenant
from tests.web.harness import PHONE, check_page, login, new_page
from tests.web.locomo_chat import CAR_QUESTION, LocomoChat, locomo_chat_create
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=20_000)  # a real chat's assembly on a busy 2-core test machine
PROFILE = "evan-bot"
ITEM_LINK = re.compile(r"^/layers/(\d+)/items/(\d+)/$")


@pytest.fixture
def chat(people: People, tenant: Tenant) -> LocomoChat:
    chat = locomo_chat_create(workspace=tenant.workspace, parent=tenant.root)
    profile_create(workspace=tenant.workspace, name=PROFILE, data=ProfileInput())
    assert background.wait_idle(120)  # nothing may write once the browser runs (see harness.py)
    return chat


def rows(page: Page) -> Locator:
    return page.locator("#chunk-table tbody tr")


def item_row(page: Page, index: int) -> tuple[Locator, str]:
    """The chunk row at `index` (negative from the end) among the items' rows, and its Open link's address."""
    items = rows(page).filter(has=page.locator("form.chunk-action"))
    row = items.nth(index if index >= 0 else items.count() + index)
    href = row.locator("a.chunk-open").get_attribute("href") or ""
    assert ITEM_LINK.match(href), href
    return row, href


def status(page: Page) -> Locator:
    return page.locator("#chunk-action-status")


def assemble(page: Page, base: str, chat: LocomoChat) -> None:
    page.goto(f"{base}/preview/?layer={chat.layer.pk}")
    page.fill("input[name=token_budget]", "1000")
    page.fill("input[name=model]", "gpt-4")
    page.select_option("select[name=format]", "text")
    page.select_option("select[name=profile]", PROFILE)
    page.fill("input[name=timeout_ms]", "0")
    page.fill("textarea[name=query]", CAR_QUESTION)
    page.locator("textarea[name=query]").press("Control+Enter")
    expect(page.locator("#preview-result .token-figures")).to_contain_text("of 1000 tokens")
    expect(page).to_have_url(re.compile(rf"profile={PROFILE}"))


def pin_the_last_chunk(page: Page) -> str:
    row, href = item_row(page, -1)
    item_id = ITEM_LINK.match(href).group(2)  # type: ignore[union-attr]
    row.get_by_role("button", name=re.compile(r"^Pin chunk \d+$")).click()
    expect(status(page)).to_have_text(re.compile(rf"^Pinned message #{item_id}: it goes first"))
    first = rows(page).first
    expect(first.locator("a.chunk-open")).to_have_attribute("href", href)
    expect(first.locator(".pin-badge")).to_have_text("pinned")
    expect(first.locator("a.chunk-open")).to_be_focused()
    expect(first.get_by_role("button", name=re.compile(r"^Unpin chunk 1$"))).to_be_visible()
    return href


def exclude_and_include_again(page: Page) -> None:
    row, href = item_row(page, -1)
    item_id = ITEM_LINK.match(href).group(2)  # type: ignore[union-attr]
    row.get_by_role("button", name=re.compile(rf"^Exclude from {PROFILE}")).click()
    expect(status(page)).to_have_text(re.compile(rf"^Excluded message #{item_id} from profile {PROFILE}"))
    expect(page.locator(f"#chunk-table a.chunk-open[href='{href}']")).to_have_count(0)
    left = page.locator("#overflow-table tr", has_text="the agent profile excludes it")
    expect(left).to_have_count(1)
    include = left.get_by_role("button", name=re.compile("^Include again"))
    expect(include).to_be_focused()
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    include.click()
    expect(status(page)).to_have_text(re.compile(rf"^Message #{item_id} is in the contexts of profile {PROFILE} again"))
    expect(page.locator(f"#chunk-table a.chunk-open[href='{href}']")).to_have_count(1)
    expect(page.locator("#overflow-table tr", has_text="the agent profile excludes it")).to_have_count(0)


def lower_one_at_390_px(page: Page) -> None:
    page.set_viewport_size(PHONE)
    row, href = item_row(page, 1)
    item_id = ITEM_LINK.match(href).group(2)  # type: ignore[union-attr]
    button = row.get_by_role("button", name=re.compile(r"^Lower importance of chunk \d+, now \(0\.\d\d\)$"))
    button.scroll_into_view_if_needed()
    expect(button).to_be_in_viewport()
    button.click()
    expect(status(page)).to_have_text(
        re.compile(rf"^Lowered the importance of message #{item_id} from 0\.\d\d to 0\.\d\d, for every profile\.$")
    )
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})


def open_the_pinned_item(page: Page, href: str) -> None:
    layer_id, item_id = ITEM_LINK.match(href).groups()  # type: ignore[union-attr]
    rows(page).first.locator("a.chunk-open").click()
    expect(page).to_have_url(re.compile(rf"/layers/{layer_id}/(\?page=\d+)?#item-{item_id}$"))
    expect(page.locator(f"#item-{item_id}")).to_be_visible()
    expect(page.locator(f"#item-{item_id}")).to_contain_text("pinned")


def test_an_operator_acts_on_the_chunks_of_a_real_chats_preview(
    people: People, chat: LocomoChat, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.operator, next_path="/preview/")
    assemble(page, live_server.url, chat)
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    pinned = pin_the_last_chunk(page)
    exclude_and_include_again(page)
    lower_one_at_390_px(page)
    shared = page.url

    viewer = new_page(browser)
    login(viewer, live_server.url, people.viewer, next_path="/preview/")
    viewer.goto(shared)
    expect(viewer.locator("#preview-result .token-figures")).to_contain_text("of 1000 tokens")
    expect(viewer.locator("#chunk-table a.chunk-open").first).to_be_visible()
    expect(viewer.locator("#chunk-table form.chunk-action")).to_have_count(0)
    check_page(viewer)

    open_the_pinned_item(page, pinned)
