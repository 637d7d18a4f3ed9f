"""The official `openai` SDK's Responses API through the proxy: `instructions`, `input`, its stream events."""

from __future__ import annotations

import time
from typing import Any

import openai

from tests.proxy.proxied import FACTS, Proxied

QUESTION = "When do the database backups run?"
REPLY = "The backups run nightly at 02:00 UTC."


def sdk(proxied: Proxied, session: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": session},
        max_retries=0,
    )


def test_the_context_goes_into_the_instructions_after_the_clients_and_the_reply_is_stored(proxied: Proxied) -> None:
    raw = sdk(proxied, "resp-1").responses.with_raw_response.create(
        model="gpt-4o", instructions="Be terse.", input=QUESTION
    )
    assert raw.parse().output_text == REPLY
    sent = proxied.openai.last
    assert sent.path == "/v1/responses"
    assert sent.body["instructions"].startswith("Be terse.\n\n# Context") and FACTS[0][1] in sent.body["instructions"]
    assert sent.body["input"] == QUESTION
    assert int(raw.headers["X-Context-Tokens"]) > 0
    call = proxied.calls(1)[0]
    assert (call.status, call.reported_prompt_tokens, call.turns_stored) == (200, 1234, 3)
    assert [(m.role, m.content) for m in proxied.messages("resp-1")] == [
        ("system", "Be terse."),
        ("user", QUESTION),
        ("assistant", REPLY),
    ]


def test_streamed_deltas_reach_the_client_before_the_upstream_has_finished(proxied: Proxied) -> None:
    client = sdk(proxied, "resp-2")
    list(client.responses.create(model="gpt-4o", input="Hello", stream=True))  # the SDK builds its event models
    proxied.calls(1)
    proxied.openai.gap = 0.4
    pieces: list[tuple[float, str]] = []
    for event in client.responses.create(model="gpt-4o", input=QUESTION, stream=True):
        if event.type == "response.output_text.delta":
            pieces.append((time.monotonic(), event.delta))
    assert "".join(p for _, p in pieces) == REPLY
    assert pieces[0][0] < proxied.openai.finished_at[-1] - 0.5
    assert proxied.calls(2)[1].turns_stored == 2
    assert proxied.messages("resp-2")[-1].content == REPLY


def test_a_history_resent_with_the_output_items_stores_only_the_new_turn(proxied: Proxied) -> None:
    client = sdk(proxied, "resp-3")
    first = client.responses.create(model="gpt-4o", input=QUESTION)
    proxied.calls(1)
    history: list[Any] = [
        {"role": "user", "content": QUESTION},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"role": "user", "content": "And the deploys?"},
    ]
    client.responses.create(model="gpt-4o", input=history)
    assert proxied.calls(2)[1].turns_stored == 2
    assert [m.role for m in proxied.messages("resp-3")] == ["user", "assistant", "user", "assistant"]
