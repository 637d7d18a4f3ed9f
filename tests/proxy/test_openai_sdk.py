"""The official `openai` SDK pointed at the proxy changes nothing else, and every call is compiled and remembered."""

from __future__ import annotations

import time

import openai
import pytest

from apps.layers.models import Layer
from apps.proxy.services import upstream_set
from apps.tokens.models import TokenObservation
from tests.proxy.proxied import FACTS, UPSTREAM_KEY, Proxied

QUESTION = "When do the database backups run?"


def sdk(proxied: Proxied, key: str | None = None, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{proxied.base}/proxy/openai/v1",
        api_key=key or proxied.a.secret,
        default_headers=headers or None,
        max_retries=0,
    )


def test_a_stored_fact_reaches_the_upstreams_system_prompt_and_the_reply_is_stored(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "chat-1"})
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "system", "content": "Be terse."}, {"role": "user", "content": QUESTION}]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "The backups run nightly at 02:00 UTC."
    assert FACTS[0][1] in proxied.openai.system_prompt()
    sent = proxied.openai.last
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    system, question = sent.body["messages"]  # the context joins the client's system message, after its text
    assert system["role"] == "system" and system["content"].startswith("Be terse.\n\n# Context")
    assert question == {"role": "user", "content": QUESTION}
    assert raw.headers["X-Context-Trace-Id"] and int(raw.headers["X-Context-Tokens"]) > 0
    call = proxied.calls(1)[0]
    assert (call.status, call.model, call.reported_prompt_tokens, call.turns_stored) == (200, "gpt-4o", 1234, 3)
    assert call.trace_id == raw.headers["X-Context-Trace-Id"]
    stored = proxied.messages("chat-1")
    assert [(m.role, m.content) for m in stored] == [
        ("system", "Be terse."),
        ("user", QUESTION),
        ("assistant", "The backups run nightly at 02:00 UTC."),
    ]
    assert [m.parent_id for m in stored] == [None, stored[0].pk, stored[1].pk]
    assert TokenObservation.objects.filter(workspace=proxied.a.workspace, model="gpt-4o", reported=1234).exists()


def test_streamed_pieces_reach_the_client_before_the_upstream_has_finished(proxied: Proxied) -> None:
    proxied.openai.gap = 0.4
    client = sdk(proxied, **{"X-Context-Session": "chat-2"})
    stream = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    pieces: list[tuple[float, str]] = []
    for chunk in stream:
        assert chunk.choices, "the usage chunk the client did not ask for is not passed on"
        if chunk.choices[0].delta.content:
            pieces.append((time.monotonic(), chunk.choices[0].delta.content))
    assert "".join(p for _, p in pieces) == "The backups run nightly at 02:00 UTC."
    assert pieces[0][0] < proxied.openai.finished_at[-1] - 0.5  # two gaps still to come upstream
    assert proxied.openai.last.body["stream_options"] == {"include_usage": True}
    call = proxied.calls(1)[0]
    assert (call.stream, call.reported_prompt_tokens, call.turns_stored) == (True, 1234, 2)
    assert [m.content for m in proxied.messages("chat-2")][-1] == "The backups run nightly at 02:00 UTC."


def test_a_resent_history_stores_nothing_new_and_an_edit_branches(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "chat-3"})
    history = [{"role": "user", "content": QUESTION}]
    reply = client.chat.completions.create(model="gpt-4o", messages=history).choices[0].message.content
    proxied.calls(1)
    history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "And the deploys?"}]
    client.chat.completions.create(model="gpt-4o", messages=history)
    second = proxied.calls(2)[1]
    assert second.turns_stored == 2  # the new question and its reply: the resent turns add nothing
    stored = proxied.messages("chat-3")
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert [m.parent_id for m in stored[1:]] == [m.pk for m in stored[:-1]]
    edited = [history[0], history[1], {"role": "user", "content": "And the releases?"}]
    client.chat.completions.create(model="gpt-4o", messages=edited)
    third = proxied.calls(3)[2]
    assert third.turns_stored == 2
    branch = proxied.messages("chat-3")[-2]
    assert (branch.content, branch.parent_id) == ("And the releases?", stored[1].pk)


def test_the_session_is_the_user_else_the_conversations_first_messages(proxied: Proxied) -> None:
    client = sdk(proxied)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}], user="ann")
    proxied.calls(1)
    assert proxied.messages("proxy-user:ann")[0].content == QUESTION
    first = [{"role": "user", "content": "Hello there"}]
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=first)
    session = raw.headers["X-Context-Session"]
    assert session.startswith("proxy-conversation:")
    proxied.calls(2)
    follow = [*first, {"role": "assistant", "content": "The backups run nightly at 02:00 UTC."}]
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[*follow, {"role": "user", "content": "More?"}]
    )
    assert raw.headers["X-Context-Session"] == session


def test_a_failing_assembly_passes_the_call_through_with_a_warning(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "chat-4", "X-Context-Parent": "no-such-layer"})
    messages = [{"role": "user", "content": QUESTION}]
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=messages)
    assert raw.parse().choices[0].message.content == "The backups run nightly at 02:00 UTC."
    assert proxied.openai.last.body["messages"] == messages
    assert "storing the turns failed" in raw.headers["Warning"]
    assert raw.headers["X-Context-Tokens"] == "0"


def test_context_off_passes_the_request_untouched_and_still_records_it(proxied: Proxied) -> None:
    client = sdk(proxied, **{"X-Context-Session": "chat-5", "X-Context-Off": "1"})
    messages = [{"role": "user", "content": QUESTION}]
    client.chat.completions.create(model="gpt-4o", messages=messages)
    assert proxied.openai.last.body["messages"] == messages
    assert proxied.calls(1)[0].turns_stored == 2


@pytest.mark.parametrize(("status", "error"), [(429, openai.RateLimitError), (500, openai.InternalServerError)])
def test_an_upstream_error_reaches_the_client_as_such(
    proxied: Proxied, status: int, error: type[openai.APIStatusError]
) -> None:
    proxied.openai.fail = [status, status]
    client = sdk(proxied, **{"X-Context-Session": "chat-6"})
    for stream in (False, True):
        with pytest.raises(error) as raised:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=stream)
        assert raised.value.status_code == status
        assert raised.value.body == {"message": f"fake upstream says {status}", "type": "server_error", "code": None}
    if status == 429:
        assert raised.value.response.headers["Retry-After"] == "7"


def test_an_unreachable_upstream_is_a_502_and_the_models_list_is_the_upstreams(proxied: Proxied) -> None:
    client = sdk(proxied)
    assert [m.id for m in client.models.list()] == ["gpt-4o"]
    assert proxied.openai.last.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    upstream_set(workspace=proxied.a.workspace, kind="openai", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 502


def test_a_call_may_bring_its_own_upstream_key_which_is_never_stored(proxied: Proxied) -> None:
    own = "sk-own-Key-for-this-call-only-42"
    client = sdk(proxied, **{"X-Context-Session": "chat-7", "X-Upstream-Authorization": f"Bearer {own}"})
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    assert proxied.openai.last.headers["authorization"] == f"Bearer {own}"
    call = proxied.calls(1)[0]
    from django.core import serializers

    from apps.assembly.models import AssemblyRecord
    from apps.assembly.services import records_flush
    from apps.layers.models import Item

    records_flush()
    dumped = serializers.serialize("json", [call, *Item.objects.all(), *AssemblyRecord.objects.all()])
    assert own not in dumped and UPSTREAM_KEY not in dumped


def test_another_workspaces_key_cannot_use_this_upstream_or_session(proxied: Proxied) -> None:
    sdk(proxied, **{"X-Context-Session": "chat-8"}).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": QUESTION}]
    )
    proxied.calls(1)
    other = sdk(proxied, key=proxied.b.secret, **{"X-Context-Session": "chat-8"})
    with pytest.raises(openai.NotFoundError) as raised:
        other.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.body["code"] == "upstream_not_configured"  # type: ignore[index]
    assert len(proxied.openai.received) == 1
    upstream_set(workspace=proxied.b.workspace, kind="openai", base_url=proxied.openai.url)
    other.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    assert FACTS[0][1] not in proxied.openai.system_prompt() and "authorization" not in proxied.openai.last.headers
    own, theirs = (Layer.objects.get(workspace=t.workspace, external_id="chat-8") for t in (proxied.a, proxied.b))
    proxied.calls(2)
    assert own.items.count() == 2 and theirs.items.count() == 2
    with pytest.raises(openai.AuthenticationError):
        sdk(proxied, key="not-a-key").chat.completions.create(model="gpt-4o", messages=[])
