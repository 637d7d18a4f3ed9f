"""A search hit that asks a question ranks behind the hits that state something (engine/rank.py
`ASKING_SHARE`): "which bakery on elm street sells the sourdough?" matches a question about the bakery
as well as the turn that answers it, but only the answer holds what was asked; the reply to the
asking turn still comes along at the whole neighbour share. Measured on the LoCoMo development set
(README, Benchmarks): a packed turn that asks held evidence 4.1% of the time, one that states 10.8%."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.layers import vectors
from apps.layers.embedder import items_embed_pending
from tests.assembly.chatter_data import EVAN, SAM, chat_conversation, chat_turns
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

QUESTION = "Which bakery on Elm Street sells sourdough?"
ASKING = (SAM, "did you ever find out which bakery on elm street sells the sourdough?")
STATING = (EVAN, "rosie's sells sourdough, the little bakery on elm street, opens at 7")
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def chat(tenant: Tenant) -> int:
    """The chat of tests/assembly/chatter_data.py with the asking turn early and the stating one
    weeks later, each followed by a short reply; asked at the conversation's layer."""
    turns = chat_turns()
    turns[10:10] = [ASKING, (EVAN, "no idea, never been")]
    turns[60:60] = [STATING, (SAM, "nice")]
    conversation = chat_conversation(tenant, turns, name="Sam and Evan", start=START)
    items_embed_pending(workspace_id=tenant.workspace.pk)
    vectors._centroids.clear()  # a scope remembered from another test is not this one
    return conversation


def test_it_ranks_the_turn_that_states_the_answer_above_the_one_that_asks_it(tenant: Tenant, chat: int) -> None:
    response = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": chat, "query": QUESTION, "token_budget": 200, "format": "text", "timeout_ms": 0},
        format="json",
    )
    assert response.status_code == 200, response.json()
    order = [t["external_id"] for t in response.json()["trace"] if t["source"] == "item"]
    assert order.index("turn-60") < order.index("turn-10"), order[:5]  # the statement, the question
