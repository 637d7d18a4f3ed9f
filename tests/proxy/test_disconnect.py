"""A client that leaves mid-stream closes the proxy's upstream call with it (nobody pays for an answer no one reads)."""

from __future__ import annotations

import time

import anthropic
import openai

from tests.proxy.conftest import Proxied
from tests.waiting import wait_until

QUESTION = [{"role": "user", "content": "When do the database backups run?"}]


def test_a_client_dropping_a_chat_stream_closes_the_upstreams_connection(proxied: Proxied) -> None:
    proxied.openai.gap = 2.0  # three text pieces: the upstream would finish ~6 s after its first
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
    left = time.monotonic()
    dropped = wait_until(lambda: proxied.openai.dropped_at, timeout=10, what="the upstream's connection closed")
    assert dropped[0] - left < 3.0 and not proxied.openai.finished_at


def test_a_client_dropping_an_anthropic_stream_closes_the_upstreams_connection(proxied: Proxied) -> None:
    proxied.anthropic.gap = 2.0
    client = anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "gone-2"},
        max_retries=0,
    )
    with client.messages.stream(model="claude-opus-4-5", max_tokens=100, messages=QUESTION) as stream:  # type: ignore[arg-type]
        assert next(iter(stream.text_stream)) == "The backups "
    left = time.monotonic()  # leaving the block closed the stream
    dropped = wait_until(lambda: proxied.anthropic.dropped_at, timeout=10, what="the upstream's connection closed")
    assert dropped[0] - left < 3.0 and not proxied.anthropic.finished_at
