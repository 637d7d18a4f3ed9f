"""The user's and the developer's tasks walked in a real Chromium, with axe and 390 px checks on each page.

The user previews, switches budget from the what-if table, reloads, opens the overflow, streams,
copies and cancels. The developer finds an assembly by its query text, reads its trace, replays
it and downloads a state dump. Set SCREENSHOTS_DIR to keep PNGs of the pages (README).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect
from pytest_django.live_server_helper import LiveServer

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import background
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.services import ProfileInput, profile_create
from tests.web.harness import check_page, login, new_page
from tests.web.people import People
from tests.web.sessions_data import Conversation, conversation_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shot(page: Page, name: str) -> None:
    """A PNG of the 1440 x 900 viewport, when SCREENSHOTS_DIR is set (the README's screenshots)."""
    folder = os.environ.get("SCREENSHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.fixture
def project(people: People) -> Layer:
    workspace = people.viewer.workspace
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = layer_create(workspace=workspace, kind="project", name="Billing", parent=root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Failed card payments are retried three times."),
            ItemInput(kind="document", content="Pinned: billing questions go to the #billing channel.", pinned=True),
            *(
                ItemInput(kind="document", content=f"Billing note {n}: invoices for region {n} are sent in batches.")
                for n in range(12)
            ),
        ],
    )
    return project


@pytest.fixture
def chat(people: People, project: Layer) -> Conversation:
    conversation = conversation_create(workspace=people.viewer.workspace, parent=project)
    for budget in (300, 600, 1200):
        context_assemble(
            workspace=people.viewer.workspace,
            params=ContextParams(
                layer_id=conversation.layer.pk, query="retry worker payment queue", token_budget=budget, timeout_ms=0
            ),
        )
    assert background.wait_idle(120)  # nothing may write once the browser runs (see harness.py)
    return conversation


@pytest.fixture
def bot(people: People) -> str:
    """An agent profile to preview with: an operator's chunks then show every action (the README's screenshot)."""
    return profile_create(workspace=people.operator.workspace, name="billing-bot", data=ProfileInput()).name


def test_the_user_previews_switches_budget_reloads_and_opens_the_overflow(
    people: People, project: Layer, bot: str, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser, permissions=["clipboard-read", "clipboard-write"])
    login(page, live_server.url, people.operator, next_path="/preview/")
    page.goto(f"{live_server.url}/preview/?layer={project.pk}")
    check_page(page)  # the empty form
    page.set_viewport_size({"width": 1440, "height": 900})

    page.fill("textarea[name=query]", "when are invoices generated?")
    page.select_option("select[name=profile]", bot)
    page.fill("input[name=token_budget]", "120")
    page.fill("input[name=timeout_ms]", "0")
    page.get_by_role("button", name="Assemble").click()
    result = page.locator("#preview-result")
    expect(result.locator("#chunk-table")).to_contain_text("Invoices are generated nightly")
    expect(result.locator(".token-figures")).to_contain_text("of 120 tokens")
    expect(result.locator("#chunk-table .pin-badge")).to_have_text("pinned")
    expect(page).to_have_url(re.compile(r"token_budget=120"))
    expect(page).to_have_url(re.compile(r"query=when(\+|%20)are(\+|%20)invoices"))

    result.locator("#what-if a[data-budget='2000']").click()
    expect(result.locator(".token-figures")).to_contain_text("of 2000 tokens")
    expect(result.locator("#what-if tr.current")).to_contain_text("2000")
    expect(page).to_have_url(re.compile(r"token_budget=2000"))

    page.reload()  # the request is in the address: the same preview comes back
    expect(page.locator("#preview-result .token-figures")).to_contain_text("of 2000 tokens")
    expect(page.locator("textarea[name=query]")).to_have_value("when are invoices generated?")
    page.locator("#preview-result").scroll_into_view_if_needed()
    shot(page, "preview")
    chunks = page.locator("#chunk-table")
    expect(chunks.get_by_role("button", name=re.compile(f"^Exclude from {bot}")).first).to_be_visible()
    page.locator("#chunks-heading").evaluate("heading => heading.scrollIntoView({block: 'start'})")
    shot(page, "preview-chunks")
    check_page(page)  # a long context scrolls inside its own box, reachable by keyboard
    page.set_viewport_size({"width": 1440, "height": 900})

    page.locator("#what-if a[data-budget='1000']").click()
    expect(result.locator(".token-figures")).to_contain_text("of 1000 tokens")
    page.goto(page.url.replace("token_budget=1000", "token_budget=90"))
    overflow = page.locator("#overflow")
    expect(overflow.locator("summary")).to_contain_text("more available")
    overflow.locator("summary").click()
    expect(page.locator("#overflow-table")).to_be_visible()
    expect(page.locator("#overflow-table")).to_contain_text("did not fit the token budget")
    expect(page.locator("#overflow-table")).to_contain_text("Billing note")
    check_page(page)

    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_role("button", name="Copy to clipboard").click()
    expect(page.locator("#preview-status")).to_have_text("The context was copied to the clipboard.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#context-text").text_content()


def test_the_user_streams_the_chunks_and_can_cancel_a_slow_preview(
    people: People, project: Layer, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.viewer, next_path="/preview/")
    page.goto(f"{live_server.url}/preview/?layer={project.pk}")
    page.fill("textarea[name=query]", "billing invoices")
    page.fill("input[name=token_budget]", "400")
    page.fill("input[name=timeout_ms]", "0")
    page.get_by_role("button", name="Stream").click()
    expect(page.locator("#stream-summary")).to_contain_text("chunks,")
    assert page.locator("#stream-chunks li").count() > 1
    expect(page.locator("#stream-chunks li").first).to_contain_text("pinned")

    held: list[Route] = []
    page.route("**/preview/?*", lambda route: held.append(route))  # the answer never comes: a slow server
    page.get_by_role("button", name="Assemble").click()
    busy = page.locator("#preview-busy")
    expect(busy).to_be_visible()
    expect(page.locator("#preview-elapsed")).not_to_have_text("0.0 s")  # progress moves
    page.get_by_role("button", name="Cancel").click()
    expect(busy).to_be_hidden()
    expect(page.locator("#preview-status")).to_contain_text("Cancelled")
    expect(page.get_by_role("button", name="Assemble")).to_be_enabled()
    assert held, "the request was sent"


@pytest.fixture
def assemblies(people: People, project: Layer) -> None:
    """Made once every item is searchable by meaning, so a replay now meets the same candidates."""
    assert background.wait_idle(120)
    items_embed_pending(workspace_id=people.operator.workspace.pk)
    for query in ("who answers billing questions", "when are invoices generated", "card payment retries"):
        context_assemble(
            workspace=people.operator.workspace,
            params=ContextParams(layer_id=project.pk, query=query, token_budget=150, timeout_ms=0),
        )


def test_the_developer_finds_an_assembly_reads_its_trace_replays_it_and_downloads_a_state_dump(
    people: People, project: Layer, assemblies: None, live_server: LiveServer, browser: Browser
) -> None:
    workspace = people.operator.workspace
    page = new_page(browser, accept_downloads=True)
    login(page, live_server.url, people.developer, next_path="/console/")
    page.goto(f"{live_server.url}/console/")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    page.fill("input[name=q]", "invoices generated")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#records-count")).to_contain_text("1 assembly matches")
    expect(page).to_have_url(re.compile(r"q=invoices(\+|%20)generated"))
    page.locator("#records table a").first.click()

    expect(page.locator("h1")).to_contain_text("Trace")
    table = page.locator("#trace-table")
    expect(table).to_contain_text("Invoices are generated nightly")
    expect(table).to_contain_text("Billing")  # the layer by name
    expect(table).to_contain_text("pinned")
    expect(table).to_contain_text("left out: did not fit the token budget")
    expect(page.locator("#timings")).to_contain_text("keyword search")
    shot(page, "trace")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})

    page.get_by_role("button", name="Replay now").click()
    replay = page.locator("#replay")
    expect(replay).to_contain_text("Ran now as")
    expect(replay).to_contain_text("Same context.")

    page.goto(f"{live_server.url}/console/state/")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    with page.expect_download() as download:
        page.locator("#download-state").click()
    dump = json.loads(Path(download.value.path()).read_text())
    assert dump["workspace"]["slug"] == workspace.slug
    assert "Billing" in {layer["name"] for layer in dump["layers"]}
    assert {entry["name"] for entry in dump["schedule"]} >= {"embed-pending-items", "summarize-due-layers"}

    page.locator("#state-layers a", has_text="Billing").click()
    expect(page.locator("h1")).to_contain_text("State of project: Billing")
    check_page(page)


def test_the_session_page_draws_the_trajectory_and_the_conversation_graph(
    people: People, chat: Conversation, live_server: LiveServer, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, live_server.url, people.developer, next_path="/sessions/")
    page.goto(f"{live_server.url}/sessions/")
    check_page(page)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator("#sessions a", has_text="Retry storm").click()

    expect(page.locator("svg.timeline a.bar-link")).to_have_count(3)
    expect(page.locator("#turns tbody tr")).to_have_count(3)
    expect(page.locator("svg.conversation-graph rect.run-full").last).to_be_visible()  # the newest turns
    assert page.locator("svg.conversation-graph rect.run-hidden").count() > 0
    assert page.locator("svg.conversation-graph path.edge").count() == 1  # the fork
    assert page.locator("svg.conversation-graph line.lane").count() == 2  # the main line and the fork's
    expect(page.locator("#graph")).to_contain_text("task T-7")
    page.set_viewport_size({"width": 1440, "height": 1400})
    page.locator("#turns").scroll_into_view_if_needed()
    shot(page, "session")
    check_page(page)

    page.set_viewport_size({"width": 1440, "height": 900})
    page.select_option("#graph-preset", "context_rich")  # submits itself
    expect(page).to_have_url(re.compile(r"preset=context_rich"))
    page.locator("svg.timeline a.bar-link").first.click()  # a bar opens what was in context then
    expect(page.locator("#turn-context h2")).to_have_text("In context at turn 1")
    page.locator("#turn-context").get_by_role("link", name="trace").click()  # and leads to its trace
    expect(page.locator("h1")).to_contain_text("Trace")
