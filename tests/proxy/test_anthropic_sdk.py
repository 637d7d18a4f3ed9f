"""The official `anthropic` SDK pointed at the proxy: its `x-api-key`, the `system` field, its stream events."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import pytest

from tests.proxy.proxied import FACTS, UPSTREAM_KEY, Proxied

QUESTION = "When do the database backups run?"
REPLY = "The backups run nightly at 02:00 UTC."


def sdk(proxied: Proxied, key: str | None = None, **headers: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=key or proxied.a.secret,
        default_headers=headers or None,
        max_retries=0,
    )


def ask(text: str = QUESTION) -> list[Any]:
    return [{"role": "user", "content": text}]


def test_the_context_goes_after_the_clients_system_prompt_and_the_reply_is_stored(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "claude-1"})
    raw = client.messages.with_raw_response.create(
        model="claude-opus-4-5", max_tokens=500, system="Be terse.", messages=ask()
    )
    message = raw.parse()
    assert message.content[0].text == REPLY  # type: ignore[union-attr]
    sent = proxied.anthropic.last
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == UPSTREAM_KEY and sent.headers["anthropic-version"]
    assert sent.body["system"][0] == {"type": "text", "text": "Be terse."}  # the client's prompt stays first
    assert FACTS[0][1] in sent.body["system"][1]["text"]
    assert sent.body["messages"] == ask()
    assert raw.headers["X-Context-Trace-Id"] and int(raw.headers["X-Context-Tokens"]) > 0
    call = proxied.calls(1)[0]
    assert (call.kind, call.status, call.reported_prompt_tokens, call.turns_stored) == ("anthropic", 200, 1234, 3)
    assert [(m.role, m.content) for m in proxied.messages("claude-1")] == [
        ("system", "Be terse."),
        ("user", QUESTION),
        ("assistant", REPLY),
    ]


def test_streamed_events_reach_the_client_before_the_upstream_has_finished(proxied: Proxied) -> None:
    proxied.anthropic.gap = 0.4
    client = sdk(proxied, **{"X-Context-Session": "claude-2"})
    pieces: list[tuple[float, str]] = []
    with client.messages.stream(model="claude-opus-4-5", max_tokens=500, messages=ask()) as stream:
        for text in stream.text_stream:
            pieces.append((time.monotonic(), text))
        final = stream.get_final_message()
    assert "".join(p for _, p in pieces) == REPLY and final.usage.output_tokens == 9
    assert pieces[0][0] < proxied.anthropic.finished_at[-1] - 0.5
    call = proxied.calls(1)[0]
    assert (call.stream, call.reported_prompt_tokens, call.turns_stored) == (True, 1234, 2)
    assert proxied.messages("claude-2")[-1].content == REPLY


def test_a_resent_history_with_the_reply_as_blocks_stores_only_the_new_turn(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "claude-3"})
    first = client.messages.create(model="claude-opus-4-5", max_tokens=100, messages=ask())
    proxied.calls(1)
    history = [*ask(), {"role": "assistant", "content": first.content}, *ask("And the deploys?")]
    client.messages.create(model="claude-opus-4-5", max_tokens=100, messages=history)
    assert proxied.calls(2)[1].turns_stored == 2
    assert [m.role for m in proxied.messages("claude-3")] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize(("status", "error"), [(429, anthropic.RateLimitError), (500, anthropic.InternalServerError)])
def test_an_upstream_error_reaches_the_client_as_such(
    proxied: Proxied, status: int, error: type[anthropic.APIStatusError]
) -> None:
    proxied.anthropic.fail = [status, status]
    client = sdk(proxied, **{"X-Context-Session": "claude-4"})
    for stream in (False, True):
        with pytest.raises(error) as raised:
            client.messages.create(model="claude-opus-4-5", max_tokens=10, messages=ask("hi"), stream=stream)
        assert raised.value.status_code == status
        assert raised.value.body["type"] == "error"  # type: ignore[index]


def test_a_failing_assembly_passes_the_call_through_with_a_warning(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "claude-5", "X-Context-Parent": "no-such-layer"})
    raw = client.messages.with_raw_response.create(
        model="claude-opus-4-5", max_tokens=100, system="Be terse.", messages=ask()
    )
    assert raw.parse().content[0].text == REPLY  # type: ignore[union-attr]
    assert proxied.anthropic.last.body["system"] == "Be terse."
    assert "storing the turns failed" in raw.headers["Warning"]


def test_a_bad_key_is_refused_before_the_upstream_is_called(proxied: Proxied) -> None:
    with pytest.raises(anthropic.AuthenticationError):
        sdk(proxied, key="ca_not-a-key").messages.create(model="claude-opus-4-5", max_tokens=10, messages=ask())
    assert proxied.anthropic.received == []
