"""Counting a chat request: messages wrapped as the model's chat template wraps them, and tools.

Each format is its publisher's reference rendering: a special token counts 1, every text between
special tokens is counted exactly in the model's encoding, as the reference encodes it:
- openai: OpenAI's cookbook count (3 per message, 1 more with a name, 3 priming the reply);
- harmony (gpt-oss): `<|start|>{role}<|message|>{content}<|end|>`, then `<|start|>assistant`;
- llama3: Meta's ChatFormat: `<|begin_of_text|>`, per message `<|start_header_id|>{role}
  <|end_header_id|>` + "\n\n" + content + `<|eot_id|>`, then the assistant's header;
- chatml (Qwen): `<|im_start|>{role}\n{content}<|im_end|>\n`, then `<|im_start|>assistant\n`; the
  model's default system message when the request has none (Qwen2.5's template adds one);
- mistral (tekken v3, mistral-common's InstructTokenizerV3): `<s>`, user `[INST]{content}[/INST]`
  (the system prompt joined to the last user message with "\n\n"), assistant `{content}</s>`
  (its trailing spaces dropped).
Tool definitions, tool calls and non-text parts are rendered by each provider in its own way; they
are counted as their compact JSON and the count is then not exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apps.core.tokenizer.catalogue import ChatFormat, ModelSpec
from apps.core.tokenizer.counting import count_tokens

Counter = Callable[[str], int]


@dataclass(frozen=True)
class Message:
    """One chat message reduced to what is counted: its role, text, name and any JSON extras."""

    role: str
    text: str
    name: str = ""
    extras: tuple[str, ...] = ()  # tool calls, non-text parts: counted as JSON, not exact


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def message_of(raw: Mapping[str, Any]) -> Message:
    """A message as the OpenAI and Anthropic wire formats send it (content a string or a list of parts)."""
    content = raw.get("content")
    texts: list[str] = []
    extras: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part is not None:
                extras.append(_json(part))
    elif content is not None:
        extras.append(_json(content))
    for key in ("tool_calls", "function_call"):
        if raw.get(key):
            extras.append(_json(raw[key]))
    name = raw.get("name")
    return Message(
        role=str(raw.get("role") or "user"),
        text="\n".join(texts),
        name=name if isinstance(name, str) else "",
        extras=tuple(extras),
    )


def _openai(messages: Sequence[Message], count: Counter) -> int:
    total = 3  # every reply is primed with <|start|>assistant<|message|>
    for m in messages:
        total += 3 + count(m.role) + count(m.text) + (1 + count(m.name) if m.name else 0)
    return total


def _harmony(messages: Sequence[Message], count: Counter) -> int:
    total = 1 + count("assistant")
    for m in messages:
        total += 3 + count(m.role) + count(m.text)
    return total


def _llama3(messages: Sequence[Message], count: Counter) -> int:
    header = lambda role: 2 + count(role) + count("\n\n")  # noqa: E731
    total = 1 + header("assistant")
    for m in messages:
        total += header("ipython" if m.role == "tool" else m.role) + count(m.text) + 1
    return total


def _chatml(messages: Sequence[Message], count: Counter, default_system: str) -> int:
    total = 1 + count("assistant\n")
    if default_system and (not messages or messages[0].role != "system"):
        messages = [Message(role="system", text=default_system), *messages]
    for m in messages:
        total += 2 + count(f"{m.role}\n{m.text}") + count("\n")
    return total


def _mistral(messages: Sequence[Message], count: Counter) -> int:
    system = "\n\n".join(m.text for m in messages if m.role == "system")
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    total = 1
    for i, m in enumerate(messages):
        if m.role == "user":
            text = f"{system}\n\n{m.text}" if system and users and i == users[-1] else m.text
            total += 2 + count(text)
        elif m.role != "system":
            total += count(m.text.rstrip(" ")) + 1  # mistral-common drops an assistant text's trailing spaces
    return total


def count_chat(
    spec: ModelSpec, encoding: str, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> tuple[int, bool]:
    """(tokens, whether the rendering is the model's own) of `messages` and `tools` for `spec`'s model."""

    def count(text: str) -> int:
        return count_tokens(text, encoding) if text else 0

    parsed = [message_of(m) for m in messages]
    match spec.chat:
        case ChatFormat.HARMONY:
            total = _harmony(parsed, count)
        case ChatFormat.LLAMA3:
            total = _llama3(parsed, count)
        case ChatFormat.CHATML:
            total = _chatml(parsed, count, spec.default_system)
        case ChatFormat.MISTRAL:
            total = _mistral(parsed, count)
        case _:
            total = _openai(parsed, count)
    extras = [extra for m in parsed for extra in m.extras] + [_json(tool) for tool in tools]
    total += sum(count(extra) for extra in extras) + 2 * bool(tools)
    return total, not extras
