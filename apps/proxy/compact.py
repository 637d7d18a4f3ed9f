"""Compacting a conversation that no longer fits its model's window (the conversation window's distance
resolution applied to the live prompt), instead of letting the upstream refuse it, in each wire format's messages.

By distance from the newest message (engine.policy.Resolution): the nearest keep their full text,
the next their first sentence (SUMMARY), the next a few words (TITLE), the rest are left out
(HIDDEN) and one note says how many. System messages always stay. A tool call and the results
answering it (and a reasoning item with what it led to) stay or go together, in full, so the request
stays valid. Pure: the caller counts and retries with a tighter resolution.

What a message is in each format (its role, text, what must stay with it, how a shortened one and the
note are written) is a `Dialect`: Chat Completions messages, Responses input items, Anthropic messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apps.core.text import sentences
from apps.engine.policy import PRESETS, Resolution

# Tried in order until the conversation fits: the profiles' presets, then only the last few messages.
LADDER: tuple[Resolution, ...] = (
    PRESETS["context_rich"],
    PRESETS["balanced"],
    PRESETS["aggressive"],
    Resolution(full_context_distance=2, summary_distance=2, title_distance=2),
    Resolution(full_context_distance=0, summary_distance=0, title_distance=0),
)
TITLE_WORDS = 12
SUMMARY_CHARS = 400

Message = dict[str, Any]


def note_text(hidden: int) -> str:
    return f"[{hidden} earlier messages of this conversation are left out to fit the model's window]"


@dataclass(frozen=True)
class Dialect:
    """How one wire format's messages are compacted."""

    is_system: Callable[[Message], bool]  # always kept, never counted in distances
    joins: Callable[[list[Message], Message], bool]  # the message belongs to the group before it
    whole: Callable[[list[Message]], bool]  # the group is kept in full or left out, never shortened
    text: Callable[[Message], str]
    note_role: str  # the role of the note saying how many were left out


def _parts_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _content_text(message: Message) -> str:
    return _parts_text(message.get("content"))


# Chat Completions: an assistant message with `tool_calls` and the `tool` messages answering it.
CHAT = Dialect(
    is_system=lambda m: m.get("role") in ("system", "developer"),
    joins=lambda group, m: m.get("role") == "tool" and bool(group[0].get("tool_calls")),
    whole=lambda group: len(group) > 1 or bool(group[0].get("tool_calls")),
    text=_content_text,
    note_role="system",
)


def _item_kind(item: Message) -> str:
    return "message" if "role" in item and item.get("type") in (None, "message") else str(item.get("type"))


# Responses input items: function calls, their outputs and reasoning items (not messages) stay together,
# and an assistant message that follows a reasoning item stays with it.
RESPONSES = Dialect(
    is_system=lambda m: _item_kind(m) == "message" and m.get("role") in ("system", "developer"),
    joins=lambda group, m: (
        (_item_kind(m) != "message" and _item_kind(group[-1]) != "message")
        or (_item_kind(m) == "message" and m.get("role") == "assistant" and _item_kind(group[-1]) == "reasoning")
    ),
    whole=lambda group: any(_item_kind(m) != "message" for m in group),
    text=_content_text,
    note_role="system",
)


def _blocks(message: Message, kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


# Anthropic: an assistant's `tool_use` blocks and the next user message's `tool_result` blocks. The
# system prompt is not a message (it is the `system` field), so the note is a user message.
ANTHROPIC = Dialect(
    is_system=lambda m: False,
    joins=lambda group, m: _blocks(m, "tool_result") and _blocks(group[-1], "tool_use"),
    whole=lambda group: any(_blocks(m, "tool_use") or _blocks(m, "tool_result") for m in group),
    text=_content_text,
    note_role="user",
)


def _groups(messages: list[Message], dialect: Dialect) -> list[list[int]]:
    """Indexes of the non-system messages, each group kept or left out together."""
    groups: list[list[int]] = []
    for index, message in enumerate(messages):
        if dialect.is_system(message):
            continue
        if groups and dialect.joins([messages[i] for i in groups[-1]], message):
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def _summary(text: str) -> str:
    first = (sentences(text) or [text])[0].strip()
    return first if len(first) <= SUMMARY_CHARS else first[:SUMMARY_CHARS].rstrip() + "…"


def _title(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")


def compacted(messages: list[Message], resolution: Resolution, dialect: Dialect = CHAT) -> tuple[list[Message], int]:
    """The messages at `resolution`, and how many were left out. The newest group is always kept."""
    groups = _groups(messages, dialect)
    keep: dict[int, Message] = {}
    hidden = 0
    for distance, group in enumerate(reversed(groups)):
        first = messages[group[0]]
        if distance == 0 or distance <= resolution.full_context_distance:
            keep.update({i: messages[i] for i in group})
            continue
        text = "" if dialect.whole([messages[i] for i in group]) else dialect.text(first).strip()
        if not text or distance > resolution.title_distance:
            hidden += len(group)
        else:
            short = _summary(text) if distance <= resolution.summary_distance else _title(text)
            keep[group[0]] = {"role": first["role"], "content": short}
    out: list[Message] = []
    noted = False
    for index, message in enumerate(messages):
        if dialect.is_system(message):
            out.append(message)
        elif index in keep:
            if hidden and not noted:
                out.append({"role": dialect.note_role, "content": note_text(hidden)})
                noted = True
            out.append(keep[index])
    return out, hidden
