"""Vector search with the scope's mean embedding taken out of the query (apps/layers/vectors.py
`centred_query`): in a chat of greetings and short replies, every turn is close to every question
(they share the embedding space's common direction), so "yep whats up" outranked the turns that
answer the question; centred, the answers come before it. Measured on the LoCoMo development set (README,
Benchmarks)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.core import embeddings
from apps.layers import vectors
from apps.layers.embedder import items_embed_pending
from apps.layers.filters import ItemFilters
from tests.assembly.chatter_data import ANSWERS, GREETING, chat_conversation, chat_turns
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# No word of it in the answers but "Evan" (in half the turns): found by meaning alone.
QUESTION = "Which vehicle does Evan own?"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def chat(tenant: Tenant) -> int:
    """The chat as a client writes it: one session of a conversation, each turn a message an hour after
    the one before; the conversation's layer (asked there, as about any of its sessions: no window)."""
    turns = chat_turns()
    conversation = chat_conversation(tenant, turns, name="Evan and Sam", start=START)
    items_embed_pending(workspace_id=tenant.workspace.pk)
    vectors._centroids.clear()  # a scope remembered from another test is not this one
    return conversation


def _answers_and_greeting(body: dict) -> tuple[list[int], int]:  # type: ignore[type-arg]
    """The places in the ranked trace of the two answer turns and of the first greeting."""
    order = [t["external_id"] for t in body["trace"] if t["source"] == "item"]
    ids = {f"turn-{n}": turn for n, turn in enumerate(chat_turns())}
    answers = sorted(order.index(i) for i in order if ids[i] in ANSWERS)
    greeting = min(order.index(i) for i in order if ids[i] == GREETING)
    return answers, greeting


def test_it_ranks_the_turns_that_answer_above_the_greetings(tenant: Tenant, chat: int) -> None:
    response = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": chat, "query": QUESTION, "token_budget": 120, "format": "text", "timeout_ms": 0},
        format="json",
    )
    assert response.status_code == 200, response.json()
    answers, greeting = _answers_and_greeting(response.json())
    assert answers[-1] < greeting, (answers, greeting)
    body = ask(tenant, layer=chat, query=QUESTION, token_budget=120, format="text", timeout_ms=0)
    assert all(text in body["context"] for _, text in ANSWERS), body["context"]


def test_it_leaves_a_small_scope_uncentred(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, name="few")
    bulk(tenant, session, [{"kind": "message", "role": r, "content": t} for r, t in chat_turns()[:20]])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))
    query, _ = embeddings.embed_query(QUESTION)
    assert vectors.scope_centroid(filters) is None  # under CENTRE_MIN_ITEMS: its mean says little
    assert vectors.centred_query(filters=filters, query_vector=query) is query
