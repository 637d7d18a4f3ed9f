"""Community summaries and titles by the configured LLM (the local stand-in, tests/support/fake_provider.py):
several communities per call, kept while their text is unchanged, within the daily budget, extractive and
saying why when the LLM fails or the budget is spent; without an LLM, extractive and no call. Titles name
what a conversation is about, not its greetings."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from apps.conversations.communities import communities_refresh, layers_needing_refresh
from apps.conversations.models import Community, GraphState
from apps.layers.embedder import items_embed_pending
from apps.summaries.batch import BUDGET_SPENT, DEFERRED
from apps.summaries.models import SummaryUsage
from apps.summaries.selectors import summaries_health
from tests.conversations.sessions import messages
from tests.summaries.helpers import summary_llm
from tests.support.fake_provider import FakeProvider
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

PASSAGE = re.compile(r"^Passage (\d+):\n(.*)$", re.MULTILINE)


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """A title and summary for each numbered passage of the prompt, naming the passage's first words."""
    prompt = body["messages"][1]["content"]
    return {
        n: {"title": f"LLM title {' '.join(first.split()[:3])}", "summary": f"LLM summary of {first[:40]}"}
        for n, first in PASSAGE.findall(prompt)
    }


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    with summary_llm() as running:
        running.respond = answer
        yield running


@pytest.fixture
def llm(server: FakeProvider) -> Iterator[FakeProvider]:
    with override_settings(SUMMARY_PROVIDER="llm", SUMMARY_LLM_BASE_URL=server.url, SUMMARY_LLM_BATCH=2):
        yield server


def three_tasks(tenant: Tenant, session: int) -> None:
    messages(tenant, session, ["Invoices export as CSV.", "The export runs nightly."], task_ids=["BILL-1"])
    messages(tenant, session, ["Deploys go through Argo.", "Argo syncs every minute."], task_ids=["OPS-2"])
    messages(tenant, session, ["The login uses OAuth.", "Sessions expire in 30 minutes."], task_ids=["AUTH-3"])


def passages_asked(server: FakeProvider) -> list[int]:
    return [len(PASSAGE.findall(r["messages"][1]["content"])) for r in server.requests]


def test_the_llm_writes_summaries_and_titles_several_communities_per_call(
    llm: FakeProvider, tenant: Tenant, session: int
) -> None:
    three_tasks(tenant, session)
    communities_refresh(layer_id=session, llm_now=True)
    assert passages_asked(llm) == [2, 1]  # three communities, two per call
    body = tenant.client.get(f"/api/v1/layers/{session}/communities/").json()["results"]
    by_key = {c["key"]: c for c in body}
    assert by_key["BILL-1"]["title"] == "Task BILL-1: LLM title Invoices export as"
    assert by_key["OPS-2"]["summary"] == "LLM summary of Deploys go through Argo."
    assert {(c["summary_provider"], c["summary_note"]) for c in body} == {("llm:gpt-4o-mini", "")}
    usage = SummaryUsage.objects.get(workspace_id=tenant.workspace.pk)  # counted in the day's budget
    assert (usage.calls, usage.reserved_tokens) == (2, 0)


def test_a_community_whose_text_is_unchanged_is_not_sent_again(llm: FakeProvider, tenant: Tenant, session: int) -> None:
    three_tasks(tenant, session)
    communities_refresh(layer_id=session, llm_now=True)
    titles = dict(Community.objects.filter(layer_id=session).values_list("key", "title"))
    communities_refresh(layer_id=session, force=True, llm_now=True)
    assert len(llm.requests) == 2  # the same texts: no call
    assert dict(Community.objects.filter(layer_id=session).values_list("key", "title")) == titles
    messages(tenant, session, ["Argo also prunes old resources."], task_ids=["OPS-2"])
    communities_refresh(layer_id=session, llm_now=True)
    assert passages_asked(llm) == [2, 1, 1]  # only the changed community
    assert Community.objects.get(layer_id=session, key="OPS-2").summary_provider == "llm:gpt-4o-mini"


def test_a_spent_budget_stops_the_calls_and_the_extractive_text_says_so(
    llm: FakeProvider, tenant: Tenant, session: int
) -> None:
    three_tasks(tenant, session)
    with override_settings(SUMMARY_DAILY_TOKEN_BUDGET=100):
        communities_refresh(layer_id=session, llm_now=True)
    assert llm.requests == []
    rows = list(Community.objects.filter(layer_id=session))
    assert {(c.summary_provider, c.summary_note) for c in rows} == {("extractive", BUDGET_SPENT)}
    assert all(c.summary and c.title for c in rows)
    body = tenant.client.get(f"/api/v1/layers/{session}/communities/").json()["results"]
    assert {c["summary_note"] for c in body} == {BUDGET_SPENT}
    assert GraphState.objects.get(layer_id=session).summaries_pending
    GraphState.objects.filter(layer_id=session).update(pending_embeddings=0)  # as if every turn were embedded
    assert session in layers_needing_refresh()  # the sweep tries again
    communities_refresh(layer_id=session, llm_now=True)  # room again (the next day, or a raised budget)
    assert passages_asked(llm) == [2, 1]
    assert {c.summary_note for c in Community.objects.filter(layer_id=session)} == {""}
    assert not GraphState.objects.get(layer_id=session).summaries_pending


def test_a_failing_llm_leaves_the_extractive_text_and_says_so(llm: FakeProvider, tenant: Tenant, session: int) -> None:
    three_tasks(tenant, session)
    llm.fail_next(10)
    communities_refresh(layer_id=session, llm_now=True)
    assert len(llm.requests) == 1  # one attempt; the rest of the run does not wait on it
    rows = list(Community.objects.filter(layer_id=session))
    assert {c.summary_provider for c in rows} == {"extractive"}
    assert all(c.summary_note.startswith("llm_unavailable: InternalServerError") for c in rows), rows[0].summary_note
    assert summaries_health(workspace_id=tenant.workspace.pk)[1] == 1  # the status and dashboard show it
    communities_refresh(layer_id=session, llm_now=True)  # failing recently: no call
    assert len(llm.requests) == 1
    assert {c.summary_note for c in Community.objects.filter(layer_id=session)} == {
        "llm_unavailable: the LLM failed recently; extractive provider used"
    }


def test_without_an_llm_configured_no_call_is_made(server: FakeProvider, tenant: Tenant, session: int) -> None:
    with override_settings(SUMMARY_LLM_BASE_URL=server.url):  # an endpoint, but the default provider
        three_tasks(tenant, session)
        communities_refresh(layer_id=session, llm_now=True)
    assert server.requests == []
    rows = list(Community.objects.filter(layer_id=session))
    assert len(rows) == 3 and {(c.summary_provider, c.summary_note) for c in rows} == {("extractive", "")}


CHAT = [
    "Hey Evan, what's up? How was your weekend?",
    "Hi Sam! Pretty good, thanks. How about you?",
    "Good good. Hey, what happened with your old car? Let me know.",
    "The mechanic said the transmission of my old Honda Civic is finished after 200,000 miles.",
    "Oh no! So what are you going to drive to the hospital now?",
    "I'm buying a silver 2019 Toyota Prius hybrid from a dealer in Tacoma next Saturday.",
    "Nice, a Prius hybrid should cut your gas bill on that long commute.",
    "Yeah, it gets about 50 miles per gallon in the city, which matters with my night shifts.",
    "Haha awesome. Talk soon!",
    "Thanks Sam, see you!",
]


def test_a_topic_community_is_titled_by_what_was_said_not_by_a_greeting(tenant: Tenant, session: int) -> None:
    with override_settings(COMMUNITY_MIN_MESSAGES=3):
        ids = messages(tenant, session, CHAT)
        items_embed_pending(workspace_id=tenant.workspace.pk)
        communities_refresh(layer_id=session, llm_now=True)
    body = tenant.client.get(f"/api/v1/layers/{session}/communities/").json()["results"]
    topics = [c for c in body if c["kind"] == "topic"]
    assert topics and sum(len(c["members"]) for c in topics) >= len(ids) // 2
    greetings = {0, 1, 8, 9}  # the turns that only greet
    for community in topics:
        said = [CHAT[ids.index(i)] for i in community["members"] if ids.index(i) not in greetings]
        title = community["title"].rstrip("…")
        assert any(title in text for text in said) or not said, (community["title"], json.dumps(said))
        assert not any(title in CHAT[g] for g in greetings), community["title"]


def test_a_recompute_asked_through_the_api_never_waits_on_the_llm(
    llm: FakeProvider, tenant: Tenant, session: int
) -> None:
    three_tasks(tenant, session)
    body = tenant.client.post(f"/api/v1/layers/{session}/communities/").json()["results"]
    assert llm.requests == []  # a request: extractive now, saying the LLM writes it in the background
    assert {(c["summary_provider"], c["summary_note"]) for c in body} == {("extractive", DEFERRED)}
    communities_refresh(layer_id=session, llm_now=True)  # the background run it queued (tasks.refresh_communities)
    assert passages_asked(llm) == [2, 1]
    assert {c.summary_provider for c in Community.objects.filter(layer_id=session)} == {"llm:gpt-4o-mini"}


@pytest.mark.django_db(transaction=True)
def test_message_writes_get_llm_summaries_in_the_background(
    llm: FakeProvider, tenant: Tenant, session: int, wait_background: object
) -> None:
    three_tasks(tenant, session)  # each write queues the layer's recomputation after commit
    wait_background()  # type: ignore[operator]
    rows = list(Community.objects.filter(layer_id=session, kind="task"))
    assert len(rows) == 3 and {c.summary_provider for c in rows} == {"llm:gpt-4o-mini"}
    assert sum(passages_asked(llm)) >= 3  # asked by the background run, not by the writes


def test_an_archive_keeps_who_wrote_a_community(llm: FakeProvider, tenant: Tenant, session: int) -> None:
    from apps.conversations.archive import communities_export
    from apps.core.archive.parts import ExportScope

    three_tasks(tenant, session)
    communities_refresh(layer_id=session, llm_now=True)
    rows = list(communities_export(ExportScope(workspace_id=tenant.workspace.pk, embeddings=False)))
    assert {(r["summary_provider"], r["summary_note"]) for r in rows} == {("llm:gpt-4o-mini", "")}
    assert all(len(r["source_hash"]) == 64 for r in rows)
