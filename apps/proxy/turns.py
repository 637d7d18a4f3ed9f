"""A chat message of either wire format reduced to a turn: what is stored and how it is recognised.

Each turn's key chains the keys of the turns before it (position and content hash in one): a
history the client sends again maps to the keys already stored, an edited earlier message gets a
new key from there on (a branch), and the same text at another position is another turn.
Only what a client resends verbatim enters the hash (role, text, tool calls by id, name and
arguments, the tool result's call id), so a reply stored from a stream matches the message the SDK
builds from it on the next call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the OpenAI format carries it (Anthropic's `input` is dumped)


@dataclass(frozen=True)
class Turn:
    """One message: its role (user, assistant, system, tool), text, tool calls and tool-result id."""

    role: str
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""

    def rendered(self) -> str:
        """The turn as a stored message's content (never empty: an item needs some content)."""
        parts = [self.text] if self.text.strip() else []
        parts += [f"[tool call {c.name}({c.arguments})]" for c in self.tool_calls]
        if self.tool_call_id and not parts:
            parts.append("[empty tool result]")
        return "\n".join(parts) or "[empty]"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def turn_key(previous: str, turn: Turn) -> str:
    """The key of `turn` after the turn keyed `previous` ("" for the first)."""
    calls = [[c.id, c.name, c.arguments] for c in turn.tool_calls]
    payload = _dumps([previous, turn.role, turn.text, calls, turn.tool_call_id])
    return hashlib.sha256(payload.encode()).hexdigest()


def turn_keys(turns: list[Turn]) -> list[str]:
    keys: list[str] = []
    for turn in turns:
        keys.append(turn_key(keys[-1] if keys else "", turn))
    return keys


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text_of(content: object) -> str:
    """The text parts of a message's content (a string, or a list of typed parts) joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
    return "".join(texts)


def turn_of_openai(message: Mapping[str, Any]) -> Turn:
    """A Chat Completions message (`developer` counts as a system turn)."""
    role = str(message.get("role") or "user")
    calls = []
    for call in message.get("tool_calls") or ():
        if isinstance(call, Mapping):
            function = _mapping(call.get("function"))
            calls.append(
                ToolCall(
                    id=str(call.get("id") or ""),
                    name=str(function.get("name") or ""),
                    arguments=str(function.get("arguments") or ""),
                )
            )
    return Turn(
        role="system" if role == "developer" else role if role in ("user", "assistant", "system", "tool") else "user",
        text=_text_of(message.get("content")),
        tool_calls=tuple(calls),
        tool_call_id=str(message.get("tool_call_id") or ""),
    )


def turns_of_anthropic(message: Mapping[str, Any]) -> list[Turn]:
    """An Anthropic message: its text and tool uses as one turn; each tool result a turn of its own."""
    role = "assistant" if message.get("role") == "assistant" else "user"
    content = message.get("content")
    if isinstance(content, str):
        return [Turn(role=role, text=content)]
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Turn] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            arguments = _dumps(block.get("input") or {})
            calls.append(
                ToolCall(id=str(block.get("id") or ""), name=str(block.get("name") or ""), arguments=arguments)
            )
        elif kind == "tool_result":
            results.append(
                Turn(role="tool", text=_text_of(block.get("content")), tool_call_id=str(block.get("tool_use_id") or ""))
            )
    own = [Turn(role=role, text="".join(texts), tool_calls=tuple(calls))] if texts or calls or not results else []
    return [*results, *own]


def system_turn(system: object) -> Turn | None:
    """Anthropic's `system` field (a string or text blocks) as a system turn, or None."""
    text = _text_of(system)
    return Turn(role="system", text=text) if text else None
