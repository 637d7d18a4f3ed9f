"""`POST /api/v1/tokens/`: exact counts per model, calibrated estimates, and their error in the stats."""

from __future__ import annotations

import math

import pytest

from apps.core.tokenizer import count_tokens, model_spec
from apps.core.tokenizer.chat import count_chat
from apps.core.tokenizer.estimates import MIN_CALLS, STARTING
from apps.tokens.services import token_observation_record, tokens_count
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

TEXT = "Backups run nightly at 02:00 UTC; 漢字 and émojis 😀 count too."
CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "When do backups run?"},
    {"role": "assistant", "content": "Nightly."},
    {"role": "user", "content": [{"type": "text", "text": "At what hour?"}]},
]
TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}


def count(t: Tenant, **body: object) -> dict[str, object]:
    response = t.client.post("/api/v1/tokens/", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("llama-3.1-8b", "llama3"),
        ("qwen3-8b", "qwen2"),
        ("mistral-nemo", "tekken"),
        ("gpt-oss-20b", "o200k_harmony"),
    ],
)
def test_it_counts_a_text_exactly_in_the_models_vocabulary(tenant: Tenant, model: str, encoding: str) -> None:
    body = count(tenant, model=model, text=TEXT)
    assert body["tokens"] == count_tokens(TEXT, encoding)
    assert (body["encoding"], body["exact"], body["margin"], body["known"], body["warnings"]) == (
        encoding,
        True,
        0.0,
        True,
        [],
    )


def test_it_counts_chat_messages_with_the_models_overhead_and_tools_approximately(tenant: Tenant) -> None:
    spec = model_spec("llama-3.1-8b")
    assert spec is not None
    body = count(tenant, model="llama-3.1-8b", messages=CHAT)
    assert (body["tokens"], body["exact"]) == (count_chat(spec, "llama3", CHAT, [])[0], True)
    assert body["tokens"] > sum(count_tokens(str(m["content"]), "llama3") for m in CHAT)
    with_tools = count(tenant, model="llama-3.1-8b", messages=CHAT, tools=[TOOL])
    assert with_tools["tokens"] > body["tokens"] and not with_tools["exact"] and with_tools["margin"] > 0
    assert with_tools["warnings"]


def test_claude_is_a_calibrated_estimate_with_its_margin(tenant: Tenant) -> None:
    body = count(tenant, model="claude-sonnet-4-5", text=TEXT)
    start = STARTING["claude"]
    assert body["tokens"] == math.ceil(count_tokens(TEXT, "o200k_base") * start.ratio - 1e-9)
    assert (body["exact"], body["margin"], body["calls"]) == (False, start.margin, 0)
    assert "publishes no tokenizer" in body["warnings"][0]


def test_an_unknown_model_is_estimated_and_says_so(tenant: Tenant) -> None:
    body = count(tenant, model="frontier-9000", text=TEXT)
    assert (body["known"], body["exact"], body["encoding"]) == (False, False, "cl100k_base")
    assert "not in the model catalogue" in body["warnings"][0]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"model": "gpt-4o"}, 400, "invalid_text"),
        ({"model": "gpt-4o", "text": "a", "messages": []}, 400, "invalid_text"),
        ({"model": "gpt-4o", "text": "a", "tools": [TOOL]}, 400, "invalid_tools"),
        ({"model": "gpt-4o", "messages": "hi"}, 400, "invalid_messages"),
        ({"model": "gpt-4o", "text": "a", "extra": 1}, 400, None),
        ({"model": "gpt-4o", "text": "x" * 200_001}, 413, "tokens_input_too_large"),
    ],
)
def test_bad_input_gets_a_stable_code(tenant: Tenant, body: dict[str, object], status: int, code: str | None) -> None:
    response = tenant.client.post("/api/v1/tokens/", body, format="json")
    assert response.status_code == status, response.content
    if code:
        assert response.json()["error"]["code"] == code


def test_reported_usage_calibrates_the_estimate_and_the_stats_show_its_error(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    texts = [f"Observation {i}: " + "the nightly backup moved to 03:00 " * (i % 7 + 1) for i in range(MIN_CALLS + 10)]
    for text in texts:
        ours = tokens_count(workspace=tenant.workspace, model="claude-opus-4-1", text=text)
        token_observation_record(workspace=tenant.workspace, count=ours, reported=round(ours.base_tokens * 1.3))
    after = count(tenant, model="claude-opus-4-1", text=TEXT)
    assert after["calls"] == len(texts) and after["margin"] < STARTING["claude"].margin
    assert (
        after["tokens"] == math.ceil(count_tokens(TEXT, "o200k_base") * 1.3)
        or abs(after["tokens"] - count_tokens(TEXT, "o200k_base") * 1.3) <= 1
    )
    assert count(other_tenant, model="claude-opus-4-1", text=TEXT)["calls"] == 0  # one tenant's calls stay its own
    stats = tenant.client.get("/api/v1/stats/").json()["token_counts"]
    (claude,) = [row for row in stats if row["model"] == "claude-opus-4-1"]
    assert claude["calls"] == len(texts) and claude["estimated"]
    assert 0.15 < claude["error_p50"] < 0.2  # reported 1.3 x base against our 1.11 x base
    assert other_tenant.client.get("/api/v1/stats/").json()["token_counts"] == []


def test_a_context_for_an_estimated_model_keeps_the_margin_free(tenant: Tenant) -> None:
    items = [
        {"kind": "memory", "type": "fact", "content": f"Fact {i}: backups run nightly and are kept 30 days."}
        for i in range(40)
    ]
    assert (
        tenant.client.post("/api/v1/items/bulk/", {"layer": tenant.root.pk, "items": items}, format="json").status_code
        == 201
    )
    body = tenant.client.post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query": "backups", "token_budget": 300, "model": "claude-3-5-sonnet"},
        format="json",
    ).json()
    held = math.floor(300 / (1 + STARTING["claude"].margin))
    assert body["tokens_estimated"] and body["total_tokens"] <= held
    assert body["total_tokens"] == math.ceil(
        count_tokens(body["context"], "o200k_base") * STARTING["claude"].ratio - 1e-9
    )
    assert any("99% of prompts fit" in w for w in body["warnings"])
