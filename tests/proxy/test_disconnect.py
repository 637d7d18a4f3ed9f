"""A client that leaves mid-stream closes the proxy's upstream call with it (nobody pays for an answer no one reads)."""

from __future__ import annotations

import anthropic
import openai

from tests.proxy.proxied import Proxied
from tests.support.waiting import wait_until

QUESTION = [{"role": "user", "content": "When do the database backups run?"}]


def test_a_client_dropping_a_chat_stream_closes_the_upstreams_connection(proxied: Proxied) -> None:
    proxied.openai.gap = 3.0  # five events with text deltas: the upstream would finish ~12 s after its first piece
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "gone-1"},
        max_retries=0,
    )
    stream = client.chat.completions.create(model="gpt-4o", messages=QUESTION, stream=True)  # type: ignore[arg-type]
    first = next(chunk for chunk in stream if chunk.choices and chunk.choices[0].delta.content)
    assert first.choices[0].delta.content == "The backups "
    stream.close()  # the client leaves
    # The upstream saw its connection closed before it could finish its stream: it was the client's leaving.
    wait_until(lambda: proxied.openai.dropped_at or proxied.openai.finished_at, timeout=30, what="the stream's end")
    assert proxied.openai.dropped_at and not proxied.openai.finished_at


def test_a_client_dropping_an_anthropic_stream_closes_the_upstreams_connection(proxied: Proxied) -> None:
    proxied.anthropic.gap = 3.0
    client = anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "gone-2"},
        max_retries=0,
    )
    with client.messages.stream(model="claude-opus-4-5", max_tokens=100, messages=QUESTION) as stream:  # type: ignore[arg-type]
        assert next(iter(stream.text_stream)) == "The backups "
    # leaving the block closed the stream
    wait_until(
        lambda: proxied.anthropic.dropped_at or proxied.anthropic.finished_at, timeout=30, what="the stream's end"
    )
    assert proxied.anthropic.dropped_at and not proxied.anthropic.finished_at
