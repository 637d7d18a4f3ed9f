"""The OpenAI Agents SDK on Context Architect (`pip install "contextarch-client[openai-agents]"`).

- `ContextArchitectSession`: the SDK's `Session`, keeping a conversation as a session layer of the
  workspace (external id = the session id): each input item is a `message` item, so the history is
  searchable and assembled into later contexts like any other message. The SDK's item itself rides
  in the item's metadata, so `get_items` gives back exactly what was added.
- `context_instructions`: dynamic instructions that assemble context for the run's latest user
  message (or a query of your own) and put it after your instructions, once per run.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any, Unpack, cast

from agents import Agent, RunContextWrapper
from agents.items import TResponseInputItem
from agents.memory import SessionSettings

from contextarch_client.async_client import AsyncContextArchitect
from contextarch_client.errors import Conflict, NotFound
from contextarch_client.models import Item
from contextarch_client.params import ContextParams

ITEM_KEY = "openai_agents_item"  # where an item's metadata keeps the SDK's own item
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def item_text(item: Any) -> str:
    """The readable text of an SDK input item: a message's text, else the item as JSON."""
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    else:
        text = ""
    return text if text.strip() else json.dumps(item, ensure_ascii=False, default=str)


class ContextArchitectSession:
    """A conversation of the OpenAI Agents SDK kept as the session layer `session_id` of the workspace.

    The layer is created under `parent` (a layer id; the workspace's company root when omitted) on
    the first `add_items`; `clear_session` deletes it with its items.
    """

    session_settings: SessionSettings | None = None

    def __init__(self, session_id: str, *, client: AsyncContextArchitect, parent: int | None = None) -> None:
        self.session_id = session_id
        self.client = client
        self.parent = parent
        self._layer: int | None = None

    async def _layer_id(self, *, create: bool) -> int | None:
        if self._layer is not None:
            return self._layer
        found = await self.client.list_layers(kind="session", external_id=self.session_id)
        if found.results:
            self._layer = found.results[0].id
        elif create:
            parent = self.parent
            if parent is None:
                parent = (await self.client.list_layers(kind="company")).results[0].id
            try:
                self._layer = (
                    await self.client.create_layer(
                        kind="session", name=self.session_id[:200], parent=parent, external_id=self.session_id
                    )
                ).id
            except Conflict:  # created meanwhile by another process
                return await self._layer_id(create=False)
        return self._layer

    async def _messages(self, layer: int) -> list[Item]:
        return [item async for item in self.client.iter_items(layer=layer, kind="message", page_size=500)]

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation oldest first; with `limit`, its latest `limit` items."""
        layer = await self._layer_id(create=False)
        if layer is None:
            return []
        try:
            items = [_sdk_item(item) for item in await self._messages(layer)]
        except NotFound:  # cleared meanwhile through another session object
            self._layer = None
            return []
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items in one all-or-nothing request."""
        if not items:
            return
        rows = [_row(item) for item in items]
        for start in range(0, len(rows), 1000):
            chunk = rows[start : start + 1000]
            try:
                await self.client.create_items(layer=await self._created_layer(), items=chunk)
            except NotFound:  # cleared meanwhile through another session object: start it again
                self._layer = None
                await self.client.create_items(layer=await self._created_layer(), items=chunk)

    async def _created_layer(self) -> int:
        layer = await self._layer_id(create=True)
        assert layer is not None
        return layer

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest item and give it back (None when the conversation is empty)."""
        layer = await self._layer_id(create=False)
        if layer is None:
            return None
        try:
            count = (await self.client.list_items(layer=layer, kind="message", page_size=1)).count
            if count == 0:
                return None
            (last,) = (await self.client.list_items(layer=layer, kind="message", page=count, page_size=1)).results
            await self.client.delete_item(last.id)
        except NotFound:  # cleared meanwhile, or the item popped by another session object
            self._layer = None
            return None
        return _sdk_item(last)

    async def clear_session(self) -> None:
        """Delete the session layer and everything in it."""
        layer = await self._layer_id(create=False)
        if layer is not None:
            with suppress(NotFound):  # cleared meanwhile
                await self.client.delete_layer(layer)
        self._layer = None


def _row(item: TResponseInputItem) -> dict[str, Any]:
    role = item.get("role") if isinstance(item, dict) else None
    stored = json.loads(json.dumps(item, default=str))  # plain JSON, as it will come back
    return {
        "kind": "message",
        "role": ROLES.get(str(role), "tool"),
        "content": item_text(item),
        "metadata": {ITEM_KEY: stored},
    }


def _sdk_item(item: Item) -> TResponseInputItem:
    metadata = item.metadata if isinstance(item.metadata, dict) else {}
    stored = metadata.get(ITEM_KEY)
    if isinstance(stored, dict):
        return stored  # type: ignore[return-value]
    role = item.role if item.role in ("user", "assistant", "system") else "user"
    return cast(TResponseInputItem, {"role": role, "content": item.content})


def latest_user_text(items: Sequence[Any]) -> str:
    """The text of the last user message among a run's input items ('' when there is none)."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            return item_text(item)
    return ""


def context_instructions(
    client: AsyncContextArchitect,
    instructions: str = "",
    *,
    query_from: Callable[[RunContextWrapper[Any]], str] | None = None,
    **params: Unpack[ContextParams],
) -> Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]:
    """Dynamic instructions for `Agent(instructions=...)`: `instructions`, then the context assembled
    (`params` as for `get_context`: layer, token_budget, ...) for the run's latest user message or
    for `query_from(run_context)`. Without a query, the instructions alone."""

    async def build(run_context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        text = query_from(run_context) if query_from is not None else latest_user_text(run_context.turn_input)
        if not text.strip():
            return instructions
        request: ContextParams = {**params, "query": text}
        context = (await client.get_context(**request)).context
        return f"{instructions}\n\n{context}" if instructions else context

    return build
