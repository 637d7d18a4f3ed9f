"""The OpenAI Agents SDK adapter (contextarch_client.openai_agents) against a live server, the SDK's own
Runner driving it, with a local stand-in for the Responses API (no LLM call)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from contextarch_client import AsyncContextArchitect
from contextarch_client.openai_agents import ContextArchitectSession, context_instructions
from tests.clients.live_data import Live
from tests.support.fake_provider import fake_provider

pytestmark = pytest.mark.server
CALL = {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"service": "billing"}'}
CONVERSATION: list[Any] = [
    {"role": "user", "content": "Which team owns billing?"},
    CALL,
    {"type": "function_call_output", "call_id": "call_1", "output": "team 3"},
    {"role": "assistant", "content": [{"type": "output_text", "text": "Team 3 owns billing.", "annotations": []}]},
]


def test_the_session_keeps_get_add_pop_and_clear_on_a_session_layer(live: Live) -> None:
    async def work() -> dict[str, Any]:
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            session = ContextArchitectSession("chat-7", client=ca, parent=live.session.parent_id)
            seen: dict[str, Any] = {"empty": await session.get_items(), "pop_empty": await session.pop_item()}
            await session.add_items(CONVERSATION[:2])
            await session.add_items(CONVERSATION[2:])
            seen["all"] = await session.get_items()
            seen["last_two"] = await session.get_items(limit=2)
            (layer,) = (await ca.list_layers(external_id="chat-7")).results
            seen["layer"] = layer
            seen["rows"] = [(i.kind, i.role, i.content) async for i in ca.iter_items(layer=layer.id)]
            seen["popped"] = await session.pop_item()
            seen["after_pop"] = await session.get_items()
            again = ContextArchitectSession("chat-7", client=ca)  # another process, the same conversation
            seen["other"] = await again.get_items()
            await session.clear_session()
            seen["cleared"] = await again.get_items(), (await ca.list_layers(external_id="chat-7")).count
            return seen

    seen = asyncio.run(work())

    assert (seen["empty"], seen["pop_empty"]) == ([], None)
    assert seen["all"] == CONVERSATION
    assert seen["last_two"] == CONVERSATION[2:]
    assert (seen["layer"].kind, seen["layer"].parent) == ("session", live.session.parent_id)
    assert [row[:2] for row in seen["rows"]] == [("message", r) for r in ("user", "tool", "tool", "assistant")]
    assert seen["rows"][0][2] == "Which team owns billing?" and seen["rows"][3][2] == "Team 3 owns billing."
    assert seen["popped"] == CONVERSATION[3]
    assert seen["after_pop"] == seen["other"] == CONVERSATION[:3]
    assert seen["cleared"] == ([], 0)


def test_a_run_gets_the_assembled_context_in_its_instructions_and_keeps_its_turns(live: Live) -> None:
    set_tracing_disabled(True)

    async def work(url: str) -> list[Any]:
        model = OpenAIResponsesModel(model="gpt-4.1-mini", openai_client=AsyncOpenAI(base_url=url, api_key="test"))
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            agent = Agent(
                name="support",
                model=model,
                instructions=context_instructions(ca, "Answer from the context.", layer=live.session.pk),
            )
            session = ContextArchitectSession("run-1", client=ca, parent=live.a.root.pk)
            await Runner.run(agent, "How long are database backups kept?", session=session)
            await Runner.run(agent, "When are builds promoted?", session=session)
            return await session.get_items()

    with fake_provider(reply="Answered from the context.") as llm:
        items = asyncio.run(work(llm.url))

    first, second = llm.requests
    assert first["instructions"].startswith("Answer from the context.\n\n")
    assert "kept for 35 days" in first["instructions"]
    assert "every Tuesday" in second["instructions"]
    # The second run's input starts with the first run's turn, read back from the session layer.
    assert [i.get("role") for i in second["input"]] == ["user", "assistant", "user"]
    assert [i.get("role") for i in items] == ["user", "assistant", "user", "assistant"]
    assert items[2]["content"] == "When are builds promoted?"
