"""Where the proxy puts the context: in the client's own system prompt (the Anthropic `system` field, the first
system or developer message), after its text unless the call's profile says before."""

from __future__ import annotations

from typing import Any

import anthropic
import openai

from apps.profiles.services import ProfileInput, profile_create
from tests.proxy.proxied import FACTS, Proxied

QUESTION = "When do the database backups run?"


def test_a_profile_puts_it_before_the_clients_cached_system_blocks_which_stay_as_they_were(proxied: Proxied) -> None:
    profile_create(workspace=proxied.a.workspace, name="first", data=ProfileInput(context_position="before_system"))
    client = anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "position-1", "X-Context-Profile": "first"},
        max_retries=0,
    )
    own: list[Any] = [
        {"type": "text", "text": "You are the ops assistant.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Be terse."},
    ]
    client.messages.create(
        model="claude-opus-4-5", max_tokens=100, system=own, messages=[{"role": "user", "content": QUESTION}]
    )
    system = proxied.anthropic.last.body["system"]
    assert FACTS[0][1] in system[0]["text"] and system[1:] == own


def test_by_default_it_joins_the_first_developer_message_after_its_parts(proxied: Proxied) -> None:
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "position-2"},
        max_retries=0,
    )
    developer = {"role": "developer", "content": [{"type": "text", "text": "Be terse."}]}
    messages: list[Any] = [developer, {"role": "user", "content": QUESTION}]
    client.chat.completions.create(model="gpt-4o", messages=messages)
    sent = proxied.openai.last.body["messages"]
    assert len(sent) == 2 and sent[1] == messages[1]  # one system prompt still: no second system message
    assert sent[0]["role"] == "developer" and sent[0]["content"][0] == {"type": "text", "text": "Be terse."}
    assert FACTS[0][1] in sent[0]["content"][1]["text"]
