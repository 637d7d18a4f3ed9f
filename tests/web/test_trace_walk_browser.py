"""A developer's walk in Chromium over a real 509-turn chat (LoCoMo conv-49, every turn embedded):
the preview of "What kind of car does Evan drive?" answers without a false cancel notice and a
what-if row switches the form's budget with the result and the address (issue 19 item 3); from the
preview's trace the developer finds why an answer turn was left out, asks "why not?", pins it and
replays (item 1); none of those page runs counts in the dashboard's agent figures, and the
console lists them as page runs (item 7).

One test, one seed: writing and embedding the chat takes most of its time.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from apps.core import background
from tests.support.tenants import Tenant
from tests.web.harness import check_page, login, new_page
from tests.web.locomo_chat import CAR_QUESTION, LocomoChat, locomo_chat_create
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=20_000)  # a real chat's assembly on a busy 2-core test machine


@pytest.fixture
def chat(people: People, tenant: Tenant) -> LocomoChat:
    chat = locomo_chat_create(workspace=tenant.workspace, parent=tenant.root)
    assert background.wait_idle(120)  # nothing may write once the browser runs (see harness.py)
    return chat


def what_if_chunks(page: Page, budget: int) -> int:
    row = page.locator("#what-if tr", has=page.locator(f"a[data-budget='{budget}']"))
    return int(row.locator("td").nth(2).inner_text())


def preview_the_car_question(page: Page, base: str, chat: LocomoChat) -> None:
    """Assemble with Ctrl+Enter: no cancel notice; a what-if click sets the budget field, the result
    and the address, with the figures its row promised; Stream then uses that budget."""
    page.goto(f"{base}/preview/?layer={chat.layer.pk}")
    page.fill("input[name=token_budget]", "1000")
    page.fill("input[name=model]", "gpt-4")
    page.select_option("select[name=format]", "text")
    page.fill("input[name=timeout_ms]", "0")
    page.fill("textarea[name=query]", CAR_QUESTION)
    page.locator("textarea[name=query]").press("Control+Enter")
    result = page.locator("#preview-result")
    expect(result.locator(".token-figures")).to_contain_text("of 1000 tokens")
    expect(page).to_have_url(re.compile(r"token_budget=1000"))
    expect(page.locator("#preview-busy")).to_be_hidden()
    expect(page.locator("#preview-status")).to_have_text("")  # a successful Assemble is no cancel

    promised = what_if_chunks(page, 2000)
    result.locator("#what-if a[data-budget='2000']").click()
    expect(result.locator(".token-figures")).to_contain_text("of 2000 tokens")
    expect(page.locator("input[name=token_budget]")).to_have_value("2000")
    expect(page).to_have_url(re.compile(r"token_budget=2000"))
    expect(result.locator(".token-figures")).to_contain_text(f"· {promised} chunks")
    expect(page.locator("#preview-status")).to_have_text("")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    page.get_by_role("button", name="Stream").click()
    expect(page.locator("#stream-summary")).to_contain_text(f"{promised} chunks,")
    expect(page.locator("#stream-summary")).to_contain_text("of 2000 tokens")


def pin_the_left_out_answer_from_the_trace(page: Page, chat: LocomoChat) -> None:
    """From the preview at 1000 tokens, open its trace, find the answer turn D1:2 among the left out,
    read why, ask "why not?", pin it and replay: it is in the context now."""
    page.locator("#what-if a[data-budget='1000']").click()
    expect(page.locator("#preview-result .token-figures")).to_contain_text("of 1000 tokens")
    page.locator("#preview-result .token-figures a[href^='/console/traces/']").click()
    expect(page.locator("h1")).to_contain_text("Trace")
    assert page.locator("#replay").bounding_box()["y"] < page.locator("#trace-table").bounding_box()["y"]  # type: ignore[index]
    expect(page.locator("#trace-request")).to_contain_text("The request as sent")
    page.locator("#trace-context summary").click()
    expect(page.locator("#trace-context pre")).to_contain_text("Evan")

    page.fill("#trace-q", "Prius")
    page.select_option("#trace-decision", "out")
    expect(page).to_have_url(re.compile(r"decision=out"))
    answer = page.locator("#trace-table tbody tr", has_text="conv-49:D1:2")
    expect(answer).to_have_count(1)
    expect(answer.locator(".why")).to_contain_text(
        re.compile(r"ranked \d+(st|nd|rd|th); the budget was spent by #\d+; would have needed \d+ more tokens")
    )
    expect(answer.locator("a", has_text="new Prius")).to_have_attribute("href", re.compile(r"^/layers/\d+/items/\d+/$"))
    answer.locator("td.score summary").click()
    expect(answer.locator(".formula")).to_contain_text("relevance")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    answer.get_by_role("button", name=re.compile("Why not")).click()
    why = page.locator("#why-not")
    expect(why.locator("#why-not-pinned")).to_contain_text("in at")
    # What pinning costs: the chunks it pushes out, or nothing when the pinned turn fits in what was
    # left (at a shorter rung); which one depends on the ranking of this real chat, not on the page.
    expect(why.locator("#why-not-displaced")).to_have_text(re.compile(r"^(\d+ chunks?, \d+ tokens|nothing)$"))
    expect(why).to_be_focused()
    why.get_by_role("button", name="Pin this item").click()
    expect(page.locator("#pin-done")).to_contain_text("Pinned.")

    page.get_by_role("button", name="Replay now").click()
    replay = page.locator("#replay")
    expect(replay).to_contain_text("Ran now as")
    expect(replay.locator("#replay-diff tr.added", has_text="new Prius")).to_have_count(1)
    check_page(page)


def test_a_developer_walks_from_the_preview_of_a_real_chat(
    people: People, chat: LocomoChat, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.developer, next_path="/preview/")
    preview_the_car_question(page, live_server.url, chat)
    page.set_viewport_size({"width": 1440, "height": 900})
    pin_the_left_out_answer_from_the_trace(page, chat)

    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/?range=24h")
    expect(page.locator(".stat", has_text="Assemblies").locator("dd")).to_have_text("0")  # all were page runs
    page.goto(f"{live_server.url}/console/?origin=page")
    expect(page.locator("#records-count")).to_contain_text("match")
    assert page.locator("#records .badge.origin-page").count() >= 4  # previews at 1000, 2000, 1000, the replay
    assert page.locator("#records .badge.origin-agent").count() == 0
    check_page(page)
