"""An operator's experiment in Chromium on a real 509-turn chat (LoCoMo conv-49, every turn embedded):
upload 20 of its questions with their evidence turns as JSON lines, run them with two profiles in the
background, watch the progress and read recall for both, side by side and per question (issue 19,
"Experiments in the pages"); axe clean and nothing sideways at 390 px on the new pages; a viewer of
another workspace gets a 404 for the run and the set.

One test, one seed: writing and embedding the chat takes most of its time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from pytest_django.live_server_helper import LiveServer

from apps.core import background
from apps.profiles.services import ProfileInput, profile_create
from apps.workspaces.models import Role
from tests.support.tenants import Tenant
from tests.web.harness import PageUser, check_page, login, new_page, page_user_create
from tests.web.locomo_chat import LocomoChat, locomo_chat_create
from tests.web.people import People

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=20_000)  # a real chat's assembly on a busy 2-core test machine
QUESTIONS = 20


@pytest.fixture
def chat(people: People, tenant: Tenant) -> LocomoChat:
    chat = locomo_chat_create(workspace=tenant.workspace, parent=tenant.root)
    profile_create(workspace=tenant.workspace, name="lean", data=ProfileInput(token_budget=500))
    profile_create(workspace=tenant.workspace, name="roomy", data=ProfileInput(token_budget=2000))
    assert background.wait_idle(120)  # nothing may write once the browser runs (see harness.py)
    return chat


@pytest.fixture
def stranger(other_tenant: Tenant) -> PageUser:
    """A viewer of another workspace."""
    return page_user_create(workspace=other_tenant.workspace, username="stan", role=Role.VIEWER)


def question_file(chat: LocomoChat, directory: Path) -> Path:
    """The chat's first 20 questions with evidence, as a person would export them."""
    asked = [q for q in chat.questions.values() if q.evidence][:QUESTIONS]
    path = directory / "conv-49.jsonl"
    path.write_text("\n".join(json.dumps({"question": q.question, "expected": list(q.evidence)}) for q in asked))
    return path


def test_an_operator_compares_two_profiles_on_a_real_chat(
    people: People, chat: LocomoChat, stranger: PageUser, tmp_path: Path, live_server: LiveServer, browser: Browser
) -> None:
    base = live_server.url
    page = new_page(browser)
    login(page, base, people.operator, next_path="/experiments/")
    page.fill("#id_name", "conv-49 sample")
    page.set_input_files("#id_file", str(question_file(chat, tmp_path)))
    page.get_by_role("button", name="Upload").click()
    expect(page.locator("h1")).to_contain_text("Question set conv-49 sample")
    expect(page.locator("#questions tbody tr")).to_have_count(QUESTIONS)
    set_url = page.url

    page.select_option("#id_layer", str(chat.layer.pk))
    page.select_option("#id_profile_a", "lean")
    page.select_option("#id_profile_b", "roomy")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page).to_have_url(re.compile(r"/experiments/runs/\d+/$"))
    run_url = page.url
    expect(page.locator("#run-progress")).to_be_visible()  # the run goes on in the background
    expect(page.locator("#run-status")).to_contain_text(f"Done: {QUESTIONS} questions", timeout=90_000)  # polled
    recall = {side: page.locator(f"#run-figures .recall-{side}").inner_text() for side in "ab"}
    assert all(re.fullmatch(r"[01]\.\d{3}", value) for value in recall.values()), recall
    assert float(recall["b"]) >= float(recall["a"]) > 0, recall  # 2000 tokens hold what 500 do, and more
    expect(page.locator("#run-questions tbody tr")).to_have_count(QUESTIONS)
    check_page(page)

    page.goto(set_url)
    expect(page.locator("#runs tbody tr")).to_have_count(1)
    expect(page.locator("#experiments-recall .chart")).to_be_visible()
    check_page(page)
    page.goto(f"{base}/experiments/")
    expect(page.locator("#runs")).to_contain_text(f"{recall['a']} / {recall['b']}")
    check_page(page)

    outsider = new_page(browser)
    login(outsider, base, stranger, next_path="/experiments/")
    expect(outsider.locator("#runs")).to_have_count(0)
    for url in (run_url, set_url):
        answer = outsider.goto(url)
        assert answer is not None and answer.status == 404, url
