"""LlamaIndex memory on Context Architect (`pip install "contextarch-client[llama-index]"`).

`ContextArchitectBlock` is a memory block of llama-index-core's `Memory`: on each `aget` it
assembles context for the latest user message from the block's layer and the memory inserts it
(into the system message by default, in the `<memory>` template under the block's name). Messages
that the short-term memory flushes out are stored in that layer as `message` items, so they stay
searchable and come back in later contexts.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory.memory import BaseMemoryBlock

from contextarch_client.async_client import AsyncContextArchitect
from contextarch_client.params import ContextParams

ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant", MessageRole.SYSTEM: "system"}


class ContextArchitectBlock(BaseMemoryBlock[str]):
    """Assembled context for the conversation's latest user message, from one layer (`layer` or
    `layer_external_id`) within `token_budget` tokens."""

    name: str = Field(default="context_architect", description="The block's name in the memory template.")
    client: AsyncContextArchitect = Field(exclude=True)
    layer: int | None = Field(default=None, description="The layer whose context is assembled (its id).")
    layer_external_id: str | None = Field(default=None, description="... or its external id.")
    token_budget: int = Field(default=1000, description="Tokens at most for the assembled context.")
    context_params: dict[str, Any] = Field(default_factory=dict, description="More `get_context` parameters.")

    def _scope(self) -> ContextParams:
        scope: ContextParams = {"token_budget": self.token_budget}
        if self.layer is not None:
            scope["layer"] = self.layer
        if self.layer_external_id is not None:
            scope["layer_external_id"] = self.layer_external_id
        return scope

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next((m.content for m in reversed(messages or []) if m.role == MessageRole.USER and m.content), "")
        if not query:
            return ""
        request: ContextParams = {**self.context_params, **self._scope(), "query": query}  # type: ignore[typeddict-item]
        return (await self.client.get_context(**request)).context

    async def _aput(self, messages: list[ChatMessage]) -> None:
        rows = [
            {"kind": "message", "role": ROLES.get(m.role, "tool"), "content": m.content}
            for m in messages
            if m.content and m.content.strip()
        ]
        if not rows:
            return
        layer = self.layer
        if layer is None:
            external_id = self.layer_external_id
            found = [candidate async for candidate in self.client.iter_layers(external_id=external_id)]
            if not found:
                return
            layer = self.layer = found[0].id
        await self.client.create_items(layer=layer, items=rows)
