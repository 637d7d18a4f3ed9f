"""A proxied call's trace (`X-Context-Trace-Id`) names its upstream, model, reported usage and our count."""

from __future__ import annotations

from typing import Any

import anthropic
import openai

from apps.assembly.models import AssemblyRecord
from tests.proxy.proxied import UPSTREAM_KEY, Proxied
from tests.support.waiting import wait_until

QUESTION = "When do the database backups run?"


def trace(proxied: Proxied, trace_id: str) -> dict[str, Any]:
    """The trace as `GET /api/v1/traces/{id}/` answers it, once the live server wrote the record and the call."""
    wait_until(lambda: AssemblyRecord.objects.filter(trace_id=trace_id).exists(), what="the assembly's record")
    answer = wait_until(
        lambda: (got := proxied.a.client.get(f"/api/v1/traces/{trace_id}/")).json().get("proxy") and got,
        what="the trace's proxied call",
    )
    assert answer.status_code == 200
    assert UPSTREAM_KEY not in answer.content.decode()
    body: dict[str, Any] = answer.json()
    return body


def test_a_chat_completions_trace_names_the_upstream_model_reported_usage_and_our_count(proxied: Proxied) -> None:
    client = openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "trace-1"},
        max_retries=0,
    )
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": QUESTION}]
    )
    found = trace(proxied, raw.headers["X-Context-Trace-Id"])["proxy"]
    call = proxied.calls(1)[0]
    assert found["upstream"] == {"kind": "openai", "base_url": proxied.openai.url}
    assert (found["model"], found["status"], found["stream"]) == ("gpt-4o", 200, False)
    assert found["reported"] == {"prompt_tokens": 1234, "completion_tokens": 9}
    assert found["counted"]["prompt_tokens"] == call.prompt_tokens and call.prompt_tokens > 20
    assert found["counted"]["context_tokens"] == int(raw.headers["X-Context-Tokens"]) > 0
    other = proxied.b.client.get(f"/api/v1/traces/{raw.headers['X-Context-Trace-Id']}/")
    assert (other.status_code, other.json()["error"]["code"]) == (404, "trace_not_found")


def test_a_streamed_anthropic_trace_names_its_upstream_and_usage(proxied: Proxied) -> None:
    client = anthropic.Anthropic(
        base_url=f"{proxied.base}/proxy/anthropic",
        api_key=proxied.a.secret,
        default_headers={"X-Context-Session": "trace-2"},
        max_retries=0,
    )
    with client.messages.with_streaming_response.create(
        model="claude-opus-4-5", max_tokens=100, messages=[{"role": "user", "content": QUESTION}], stream=True
    ) as response:
        trace_id = response.headers["X-Context-Trace-Id"]
        response.read()
    found = trace(proxied, trace_id)["proxy"]
    assert found["upstream"] == {"kind": "anthropic", "base_url": proxied.anthropic.url}
    assert (found["model"], found["stream"]) == ("claude-opus-4-5", True)
    assert found["reported"] == {"prompt_tokens": 1234, "completion_tokens": 9}
    assert found["counted"]["prompt_tokens"] > 20


def test_a_trace_no_proxied_call_carried_says_so(proxied: Proxied) -> None:
    answer = proxied.a.client.post(
        "/api/v1/context/", {"layer": proxied.a.root.pk, "query": QUESTION, "token_budget": 200}, format="json"
    )
    assert proxied.a.client.get(f"/api/v1/traces/{answer.json()['trace_id']}/").json()["proxy"] is None
