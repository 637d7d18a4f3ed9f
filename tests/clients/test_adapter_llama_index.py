"""The LlamaIndex adapter (contextarch_client.llama_index): a memory block of llama-index-core's `Memory`
on a live server (no LLM call)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory

from contextarch_client import AsyncContextArchitect
from contextarch_client.llama_index import ContextArchitectBlock
from tests.clients.live_data import Live

pytestmark = pytest.mark.server


def test_the_memory_inserts_the_context_assembled_for_the_latest_user_message(live: Live) -> None:
    async def work() -> list[ChatMessage]:
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            block = ContextArchitectBlock(client=ca, layer_external_id="sess-a", token_budget=300)
            memory = Memory.from_defaults(session_id="chat-1", memory_blocks=[block])
            await memory.aput(ChatMessage(role="user", content="Hello."))
            await memory.aput(ChatMessage(role="assistant", content="Hi, how can I help?"))
            await memory.aput(ChatMessage(role="user", content="How long are database backups kept?"))
            return await memory.aget()

    messages = asyncio.run(work())

    system, *history = messages
    assert system.role == "system"
    assert "<context_architect>" in system.content and "kept for 35 days" in system.content
    assert [m.content for m in history] == ["Hello.", "Hi, how can I help?", "How long are database backups kept?"]


def test_an_empty_conversation_gets_no_block_and_flushed_messages_are_stored_in_the_layer(live: Live) -> None:
    async def work() -> dict[str, Any]:
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            block = ContextArchitectBlock(client=ca, layer=live.session.pk)
            empty = await Memory.from_defaults(session_id="chat-2", memory_blocks=[block]).aget()
            # A short-term memory of ~40 tokens flushes the oldest turns to the blocks.
            memory = Memory.from_defaults(
                session_id="chat-3",
                memory_blocks=[block],
                token_limit=60,
                chat_history_token_ratio=0.5,
                token_flush_size=10,
            )
            for n in range(6):
                await memory.aput(ChatMessage(role="user", content=f"Turn {n}: the invoice run failed with code E{n}."))
            stored = [i async for i in ca.iter_items(layer=live.session.pk, kind="message")]
            return {"empty": empty, "stored": [(i.role, i.content) for i in stored]}

    seen = asyncio.run(work())

    assert seen["empty"] == []
    assert seen["stored"] and seen["stored"][0] == ("user", "Turn 0: the invoice run failed with code E0.")
