"""The LangGraph adapter (contextarch_client.langgraph): a BaseStore on a live server, used directly and by
a compiled graph (no LLM call)."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from contextarch_client import ContextArchitect
from contextarch_client.langgraph import ContextArchitectStore
from tests.clients.live_data import Live

pytestmark = pytest.mark.server
ALICE, BOB = ("users", "alice", "memories"), ("users", "bob", "memories")


def test_it_gets_puts_updates_deletes_and_lists_namespaces_as_layers(live: Live) -> None:
    with ContextArchitect(live.base, live.a.secret) as ca:
        store = ContextArchitectStore(ca, parent=live.session.parent_id)
        store.put(ALICE, "diet", {"content": "Alice is vegetarian.", "source": "chat"})
        store.put(ALICE, "city", {"content": "Alice lives in Lyon."})
        store.put(BOB, "diet", {"content": "Bob avoids gluten."})
        store.put(("teams", "a/b"), "x", {"n": 1})  # a '/' inside a label stays inside it
        first = store.get(ALICE, "diet")
        store.put(ALICE, "diet", {"content": "Alice is vegan since 2024.", "source": "chat"})
        updated = store.get(ALICE, "diet")
        store.delete(ALICE, "city")
        layers = {layer.external_id: layer for layer in ca.iter_layers(kind="session")}
        seen = {
            "missing": store.get(ALICE, "city"),
            "unknown": store.get(("nobody",), "x"),
            "namespaces": store.list_namespaces(),
            "users": store.list_namespaces(prefix=("users",), max_depth=2),
            "suffix": store.list_namespaces(suffix=("*", "memories")),
            "bob_items": [i.content for i in ca.iter_items(layer=layers["langgraph:users/bob/memories"].id)],
        }
        fresh = ContextArchitectStore(ca, parent=live.session.parent_id)  # another process: nothing cached
        seen["fresh"] = fresh.get(ALICE, "diet")

        async def through_abatch() -> Any:
            await fresh.aput(BOB, "city", {"content": "Bob lives in Porto."})
            return await fresh.aget(BOB, "city"), await fresh.asearch(BOB)

        seen["async"] = asyncio.run(through_abatch())

    assert first is not None and first.value == {"content": "Alice is vegetarian.", "source": "chat"}
    assert first.namespace == ALICE and first.key == "diet"
    assert updated is not None and updated.value["content"] == "Alice is vegan since 2024."
    assert updated.created_at == first.created_at and updated.updated_at > first.updated_at
    assert seen["missing"] is None and seen["unknown"] is None
    assert seen["namespaces"] == [("teams", "a/b"), ALICE, BOB]
    assert seen["users"] == [("users", "alice"), ("users", "bob")]
    assert seen["suffix"] == [ALICE, BOB]
    assert seen["bob_items"] == ["Bob avoids gluten."]
    assert layers["langgraph:teams/a%2Fb"].parent == live.session.parent_id
    assert seen["fresh"] is not None and seen["fresh"].value == updated.value
    got, listed = seen["async"]
    assert got.value == {"content": "Bob lives in Porto."} and [hit.key for hit in listed] == ["diet", "city"]


def test_search_ranks_by_meaning_through_the_service_and_filters_values(live: Live) -> None:
    notes = {
        "k1": {"content": "The quarterly board meeting moved to Thursday afternoon.", "topic": "calendar"},
        "k2": {"content": "Alice is allergic to peanuts and shellfish.", "topic": "health"},
        "k3": {"content": "The staging database is rebuilt every night.", "topic": "ops"},
    }
    with ContextArchitect(live.base, live.a.secret) as ca:
        store = ContextArchitectStore(ca, parent=live.session.parent_id)
        for key, value in notes.items():
            store.put(ALICE, key, value)
        store.put(BOB, "k1", {"content": "Bob cannot eat nuts.", "topic": "health"})
        ca.wait_until_searchable(timeout=120)
        food = store.search(("users",), query="Which foods are dangerous to eat?", limit=3)
        health_only = store.search(("users", "alice"), query="food reactions", filter={"topic": "health"})
        listed = store.search(ALICE, limit=2, offset=1)

    assert {(hit.namespace, hit.key) for hit in food[:2]} == {(ALICE, "k2"), (BOB, "k1")}
    assert all(hit.score is not None for hit in food) and food[0].score >= food[-1].score
    assert [(hit.key, hit.value["topic"]) for hit in health_only] == [("k2", "health")]
    assert [hit.key for hit in listed] == ["k2", "k3"] and listed[0].score is None


class State(TypedDict):
    user: str
    message: str
    recalled: list[str]


def test_a_compiled_graph_reads_and_writes_the_store_sync_and_async(live: Live) -> None:
    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("users", state["user"], "memories")
        store.put(namespace, f"m{len(store.search(namespace))}", {"content": state["message"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
        hits = store.search(("users", state["user"], "memories"))
        return {"recalled": [hit.value["content"] for hit in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)

    with ContextArchitect(live.base, live.a.secret) as ca:
        graph = builder.compile(store=ContextArchitectStore(ca, parent=live.session.parent_id))
        first = graph.invoke({"user": "carol", "message": "Carol prefers email.", "recalled": []})
        second = asyncio.run(graph.ainvoke({"user": "carol", "message": "Carol is in UTC+2.", "recalled": []}))

    assert first["recalled"] == ["Carol prefers email."]
    assert second["recalled"] == ["Carol prefers email.", "Carol is in UTC+2."]
