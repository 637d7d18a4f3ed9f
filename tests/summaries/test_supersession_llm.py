"""The supersession detector with the configured LLM as its judge, against a local OpenAI-compatible
stand-in: the LLM decides when there is one, within the daily budget; when it fails, answers what was not
asked or the budget is spent, the rules decide and each proposal says why; without an LLM, the rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer, SupersessionProposal
from apps.layers.services import ItemInput, items_create, layer_create
from apps.metrics.registry import REGISTRY
from apps.summaries.models import SummaryUsage
from tests.summaries.helpers import summary_llm
from tests.support.fake_provider import FakeProvider
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    with summary_llm() as running:
        yield running


@pytest.fixture
def llm(server: FakeProvider) -> Iterator[FakeProvider]:
    with override_settings(SUMMARY_PROVIDER="llm", SUMMARY_LLM_BASE_URL=server.url):
        yield server


@pytest.fixture
def people(tenant: Tenant) -> Layer:
    return layer_create(workspace=tenant.workspace, kind="project", name="People", parent=tenant.root)


def fact(layer: Layer, content: str) -> Item:
    """A fact written and embedded (the embedder runs the detector after its write-back)."""
    (item,) = items_create(layer=layer, items=[ItemInput(kind="memory", type="fact", content=content)])
    items_embed_pending(workspace_id=layer.workspace_id)
    return item


def proposals(new: Item) -> list[SupersessionProposal]:
    return list(SupersessionProposal.objects.filter(new=new))


def fallbacks(reason: str) -> float:
    found = REGISTRY.get_sample_value("context_architect_supersession_judge_fallbacks_total", {"reason": reason})
    return found or 0.0


def test_the_llm_decides_and_its_reason_is_kept(llm: FakeProvider, people: Layer) -> None:
    old = fact(people, "Alice lives in Paris.")
    assert llm.requests == []  # nothing older to ask about
    llm.reply = {"supersedes": [{"id": old.pk, "reason": "Alice moved away from Paris."}]}  # type: ignore[dict-item]
    new = fact(people, "Alice moved to Berlin.")
    (proposal,) = proposals(new)
    assert (proposal.old_id, proposal.detector, proposal.state) == (old.pk, "llm", "pending")
    assert proposal.reason == "LLM gpt-4o-mini: Alice moved away from Paris."
    assert 0.84 <= proposal.similarity < 1
    (asked,) = llm.requests
    prompt = asked["messages"][1]["content"]
    assert "Newer statement: Alice moved to Berlin." in prompt and f"id {old.pk}: Alice lives in Paris." in prompt
    assert asked["max_tokens"] == 300 and asked["model"] == "gpt-4o-mini"
    usage = SummaryUsage.objects.get(workspace_id=people.workspace_id)  # counted in the day's LLM budget
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.reserved_tokens) == (1, 1200, 300, 0)


def test_when_the_llm_sees_no_replacement_nothing_is_proposed(llm: FakeProvider, people: Layer) -> None:
    fact(people, "Alice lives in Paris.")
    llm.reply = {"supersedes": []}  # type: ignore[dict-item]
    new = fact(people, "Alice moved to Berlin.")  # the rules would have proposed it
    assert len(llm.requests) == 1 and proposals(new) == []


def test_an_id_the_llm_was_not_asked_about_is_ignored(llm: FakeProvider, people: Layer) -> None:
    old = fact(people, "Alice lives in Paris.")
    llm.reply = {"supersedes": [{"id": 999_999, "reason": "?"}, {"id": old.pk, "reason": "moved"}]}  # type: ignore[dict-item]
    new = fact(people, "Alice moved to Berlin.")
    assert [(p.old_id, p.detector) for p in proposals(new)] == [(old.pk, "llm")]


def test_when_the_llm_fails_the_rules_decide_and_say_why_with_one_attempt(llm: FakeProvider, people: Layer) -> None:
    old = fact(people, "Alice lives in Paris.")
    llm.fail_next(5)
    before = fallbacks("failed")
    new = fact(people, "Alice moved to Berlin.")
    (proposal,) = proposals(new)
    assert (proposal.old_id, proposal.detector) == (old.pk, "rules")
    assert fallbacks("failed") == before + 1  # counted in /metrics
    assert "rule-based because the LLM failed (" in proposal.reason and "similarity" in proposal.reason
    assert len(llm.requests) == 1  # no retries in the embedder's batch: the rules are the fallback
    assert SummaryUsage.objects.get(workspace_id=people.workspace_id).reserved_tokens == 0


def test_an_unreadable_reply_falls_back_to_the_rules(llm: FakeProvider, people: Layer) -> None:
    fact(people, "Alice lives in Paris.")
    llm.reply = {"answer": "yes, it does"}
    new = fact(people, "Alice moved to Berlin.")
    (proposal,) = proposals(new)
    assert proposal.detector == "rules"
    assert "rule-based because the LLM failed (ValueError: the reply lacks" in proposal.reason


def test_a_spent_budget_asks_nothing_and_the_rules_decide(llm: FakeProvider, people: Layer) -> None:
    fact(people, "Alice lives in Paris.")
    before = fallbacks("budget")
    with override_settings(SUMMARY_DAILY_TOKEN_BUDGET=50):
        new = fact(people, "Alice moved to Berlin.")
    (proposal,) = proposals(new)
    assert fallbacks("budget") == before + 1
    assert proposal.detector == "rules" and proposal.reason.endswith("rule-based because the daily LLM budget is spent")
    assert llm.requests == []


def test_once_the_llm_fails_the_rest_of_the_batch_is_left_to_the_rules(llm: FakeProvider, people: Layer) -> None:
    fact(people, "Alice lives in Paris.")
    fact(people, "Deploys run on Fridays.")
    llm.fail_next(5)
    items_create(
        layer=people,
        items=[
            ItemInput(kind="memory", type="fact", content="Alice moved to Berlin."),
            ItemInput(kind="memory", type="fact", content="Deploys run on Mondays now."),
        ],
    )
    items_embed_pending(workspace_id=people.workspace_id)  # one batch
    assert len(llm.requests) == 1
    made = SupersessionProposal.objects.filter(layer=people)
    assert made.exists() and {p.detector for p in made} == {"rules"}


def test_without_an_llm_the_rules_decide_and_nothing_is_asked(server: FakeProvider, people: Layer) -> None:
    with override_settings(SUMMARY_LLM_BASE_URL=server.url):  # an address, but the provider is extractive
        old = fact(people, "Alice lives in Paris.")
        new = fact(people, "Alice moved to Berlin.")
    (proposal,) = proposals(new)
    assert (proposal.old_id, proposal.detector) == (old.pk, "rules") and "rule-based because" not in proposal.reason
    assert server.requests == []
    assert proposal.similarity >= 0.88
