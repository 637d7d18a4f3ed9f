"""The prompt the upstream receives fits the model's window, counted in that model's tokenizer."""

from __future__ import annotations

import math
from typing import Any

import anthropic
import openai
from django.conf import settings

from apps.core import background
from apps.layers.services import ItemInput, items_create
from apps.tokens.services import tokens_count
from tests.proxy.proxied import Proxied

WINDOW = 8_192  # gpt-4's, counted in cl100k_base
SYSTEM = {"role": "system", "content": "Be terse."}


def test_the_context_fills_the_room_left_and_no_more(proxied: Proxied) -> None:
    notes = [
        f"Backup note {i}: the database backup job {i} copies shard {i} to cold storage at 02:{i % 60:02d} UTC."
        for i in range(120)
    ]
    items_create(layer=proxied.a.root, items=[ItemInput(kind="memory", type="fact", content=n) for n in notes])
    assert background.wait_idle(120)
    history: list[Any] = []
    for turn in range(40):  # ~5,000 tokens of conversation
        history.append({"role": "user", "content": f"Question {turn}: " + "tell me about the storage plan " * 8})
        history.append(
            {"role": "assistant", "content": f"Answer {turn}: " + "the plan keeps copies in two regions " * 8}
        )
    history.append({"role": "user", "content": "When does each database backup job run?"})
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "window-1"},
        max_retries=0,
    )
    raw = client.chat.completions.with_raw_response.create(model="gpt-4", messages=history, max_tokens=500)
    injected = int(raw.headers["X-Context-Tokens"])
    received = proxied.openai.last.body
    sent = tokens_count(workspace=proxied.a.workspace, model="gpt-4", messages=received["messages"])
    own = tokens_count(workspace=proxied.a.workspace, model="gpt-4", messages=history)
    assert sent.exact and received["messages"][1:] == history
    assert own.tokens > 4_000 and injected > 200
    assert sent.tokens + 500 <= WINDOW
    assert sent.tokens - own.tokens >= injected  # the context as counted, plus its message's wrapping


def test_an_over_long_conversation_is_compacted_rather_than_refused(proxied: Proxied) -> None:
    history: list[Any] = [{"role": "system", "content": "Be terse."}]
    for turn in range(12):  # ~2,600 tokens, with 6,000 for the reply: more than gpt-4's window
        history.append({"role": "user", "content": f"Question {turn}. " + "Tell me about the storage plan. " * 15})
        history.append({"role": "assistant", "content": f"Answer {turn}. " + "The plan keeps two copies. " * 15})
    history.append({"role": "user", "content": "When do the database backups run?"})
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "window-2"},
        max_retries=0,
    )
    raw = client.chat.completions.with_raw_response.create(model="gpt-4", messages=history, max_tokens=6_000)
    assert raw.parse().choices[0].message.content == "The backups run nightly at 02:00 UTC."
    assert "was compacted" in raw.headers["Warning"]
    received = proxied.openai.last.body["messages"]
    own = tokens_count(workspace=proxied.a.workspace, model="gpt-4", messages=history)
    sent = tokens_count(workspace=proxied.a.workspace, model="gpt-4", messages=received)
    assert own.tokens + 6_000 > WINDOW and sent.tokens + 6_000 <= WINDOW
    assert received[-1] == history[-1] and received[0]["content"].startswith("Be terse.")  # context after it, if any
    assert proxied.calls(1)[0].turns_stored == len(history) + 1  # every turn is stored, as sent, and the reply


def long_history(turns: int = 12) -> list[Any]:
    history: list[Any] = []
    for turn in range(turns):  # ~2,600 tokens
        history.append({"role": "user", "content": f"Question {turn}. " + "Tell me about the storage plan. " * 15})
        history.append({"role": "assistant", "content": f"Answer {turn}. " + "The plan keeps two copies. " * 15})
    history.append({"role": "user", "content": "When do the database backups run?"})
    return history


def test_an_over_long_responses_conversation_is_compacted_rather_than_refused(proxied: Proxied) -> None:
    history = long_history()
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "window-3"},
        max_retries=0,
    )
    raw = client.responses.with_raw_response.create(
        model="gpt-4", instructions="Be terse.", input=history, max_output_tokens=6_000
    )
    assert raw.parse().output_text == "The backups run nightly at 02:00 UTC."
    assert "was compacted" in raw.headers["Warning"]
    received = proxied.openai.last.body
    own = tokens_count(workspace=proxied.a.workspace, model="gpt-4", messages=history)
    sent = tokens_count(
        workspace=proxied.a.workspace,
        model="gpt-4",
        messages=[{"role": "system", "content": received["instructions"]}, *received["input"]],
    )
    assert own.tokens + 6_000 > WINDOW and sent.tokens + 6_000 <= WINDOW
    assert received["input"][-1] == history[-1] and received["instructions"].startswith("Be terse.")
    assert len(received["input"]) < len(history) or any(len(i["content"]) < 100 for i in received["input"])
    assert proxied.calls(1)[0].turns_stored == len(history) + 2  # the instructions, every turn, the reply


def test_an_over_long_anthropic_conversation_is_compacted_rather_than_refused(proxied: Proxied) -> None:
    history = long_history()
    model, window = "claude-opus-4-5", 200_000
    limit = math.floor(window * (1 - settings.SAFETY_MARGIN))
    own = tokens_count(workspace=proxied.a.workspace, model=model, messages=[SYSTEM, *history])
    assert not own.exact  # Claude's count is an estimate with a margin
    max_tokens = limit - math.ceil(own.tokens * (1 + own.margin)) + 100  # the reply leaves the prompt no room
    client = anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "window-4"},
        max_retries=0,
        timeout=120,  # given, so that the SDK does not ask a reply this long to be streamed
    )
    raw = client.messages.with_raw_response.create(
        model=model, system="Be terse.", messages=history, max_tokens=max_tokens
    )
    assert raw.parse().content[0].text == "The backups run nightly at 02:00 UTC."  # type: ignore[union-attr]
    assert "was compacted" in raw.headers["Warning"]
    received = proxied.anthropic.last.body
    sent = tokens_count(workspace=proxied.a.workspace, model=model, messages=[SYSTEM, *received["messages"]])
    assert math.ceil(sent.tokens * (1 + sent.margin)) + max_tokens <= limit
    system = received["system"]  # a list of blocks when context was injected (after the client's)
    assert received["messages"][-1] == history[-1]
    assert (system if isinstance(system, str) else system[0]["text"]) == "Be terse."
    assert received["messages"][0]["role"] == "user"
    assert proxied.calls(1)[0].turns_stored == len(history) + 2
