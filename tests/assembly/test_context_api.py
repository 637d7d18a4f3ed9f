"""POST /api/v1/context/: hybrid retrieval, scope, filters, exact budgets, warnings and traces."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core import embeddings
from apps.core.tokenizer import count_tokens
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Layer
from apps.profiles.models import AgentProfile
from tests.support.api import layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

FACTS = {
    "billing": "The billing service retries failed card charges three times with exponential backoff.",
    "deploy": "Our deployment pipeline promotes builds from staging to production every Tuesday.",
    "search": "The search team chose PostgreSQL full-text search over Elasticsearch to reduce operational load.",
    "android": "The mobile app crashes on Android 12 when the camera permission is denied.",
    "revenue": "Quarterly revenue grew 14 percent, driven by enterprise contracts.",
    "backups": "Database backups are taken nightly at 02:00 UTC and kept for 35 days.",
    "2fa": "New engineers must set up two-factor authentication on their first day.",
}


@pytest.fixture
def conv(tenant: Tenant) -> tuple[int, int]:
    conv_id = layer(tenant, "multi_session", tenant.root.pk, external_id="conv-1")
    session_id = layer(tenant, "session", conv_id)
    items = [{"kind": "memory", "type": "fact", "content": text, "external_id": key} for key, text in FACTS.items()]
    assert (
        tenant.client.post("/api/v1/items/bulk/", {"layer": session_id, "items": items}, format="json").status_code
        == 201
    )
    return conv_id, session_id


def ask(t: Tenant, **body: object) -> dict:  # type: ignore[type-arg]
    response = t.client.post("/api/v1/context/", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_it_finds_by_keyword_before_anything_is_embedded(tenant: Tenant, conv: tuple[int, int]) -> None:
    body = ask(
        tenant,
        layer=conv[0],
        query="How long are database backups kept?",
        token_budget=60,
        model="gpt-4o",
        format="text",
    )
    assert body["chunks"][0]["external_id"] == "backups"
    assert body["total_tokens"] == count_tokens(body["context"], "o200k_base") <= 60


def test_a_secret_pasted_into_the_query_is_searched_with_but_never_stored(
    tenant: Tenant, conv: tuple[int, int]
) -> None:
    from apps.assembly.models import AssemblyRecord

    secret = "sk-proj-Zq8vN3kLm2Xr7Tw9Bp4Yc6Hd1Jf5Gs0a"
    query = f"How long are database backups kept? my key is {secret}"
    # A generous deadline: a partial answer (a busy machine) is never cached, and this test is about the cache.
    body = ask(tenant, layer=conv[0], query=query, token_budget=60, format="text", timeout_ms=60000)
    assert body["chunks"][0]["external_id"] == "backups" and body["partial"] is False
    again = ask(tenant, layer=conv[0], query=query, token_budget=60, format="text", timeout_ms=60000)
    assert again["cached"] is True
    stored = [r.request["query"] for r in AssemblyRecord.objects.filter(workspace=tenant.workspace)]
    assert len(stored) == 2 and all(secret not in q and "[REDACTED:" in q for q in stored)
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").content.decode()
    assert secret not in trace


def test_it_finds_by_meaning_once_embedded(tenant: Tenant, conv: tuple[int, int]) -> None:
    assert items_embed_pending(workspace_id=tenant.workspace.pk) == len(FACTS)
    body = ask(
        tenant,
        layer=conv[0],
        query="Which phone platform has trouble with photo access?",
        token_budget=150,  # a json chunk carries its timestamp and figures
        format="json",
    )
    assert body["chunks"][0]["external_id"] == "android"
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()
    top = trace["trace"][0]
    assert top["external_id"] == "android" and top["parts"]["vector_rank"] == 1.0 and "keyword_rank" not in top["parts"]


def test_it_accepts_a_query_vector_of_the_configured_dimensions(tenant: Tenant, conv: tuple[int, int]) -> None:
    items_embed_pending(workspace_id=tenant.workspace.pk)
    vector, _ = embeddings.embed_query("two-factor login for new hires")
    body = ask(tenant, layer=conv[0], query_vector=[float(x) for x in vector], token_budget=40)
    assert body["chunks"][0]["external_id"] == "2fa"
    bad = tenant.client.post("/api/v1/context/", {"layer": conv[0], "query_vector": [0.1] * 10}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_query_vector_dimensions"


def test_it_searches_descendants_and_ancestors_but_not_siblings(tenant: Tenant, conv: tuple[int, int]) -> None:
    sibling = layer(tenant, "multi_session", tenant.root.pk)
    tenant.client.post(
        "/api/v1/items/bulk/",
        {
            "layer": sibling,
            "items": [{"kind": "memory", "type": "fact", "content": "Sibling backups are kept forever."}],
        },
        format="json",
    )
    tenant.client.post(
        "/api/v1/items/bulk/",
        {"layer": tenant.root.pk, "items": [{"kind": "document", "content": "Company policy: backups are encrypted."}]},
        format="json",
    )
    body = ask(tenant, layer_external_id="conv-1", query="backups", format="text")
    texts = " ".join(c["text"] for c in body["chunks"])
    assert "Company policy" in texts and "35 days" in texts and "Sibling" not in texts


def test_it_puts_pinned_items_first_and_filters_by_kind_and_type(tenant: Tenant, conv: tuple[int, int]) -> None:
    tenant.client.post(
        "/api/v1/items/bulk/",
        {
            "layer": conv[1],
            "items": [
                {"kind": "spec", "type": "requirement", "content": "All answers cite their sources.", "pinned": True}
            ],
        },
        format="json",
    )
    body = ask(tenant, layer=conv[0], query="revenue growth")
    assert body["chunks"][0]["kind"] == "spec" and body["chunks"][1]["external_id"] == "revenue"
    only_specs = ask(tenant, layer=conv[0], query="revenue growth", kinds=["spec"])
    assert {c["kind"] for c in only_specs["chunks"]} == {"spec"}
    facts = ask(tenant, layer=conv[0], query="revenue growth", types=["fact"])
    assert {c["type"] for c in facts["chunks"]} == {"fact"}


def test_it_truncates_the_last_item_and_reports_overflow(tenant: Tenant, conv: tuple[int, int]) -> None:
    long_text = " ".join(f"Backup rule {i} applies to database snapshots." for i in range(60))
    tenant.client.post(
        "/api/v1/items/bulk/",
        {"layer": conv[1], "items": [{"kind": "document", "content": long_text, "importance": 1.0}]},
        format="json",
    )
    body = ask(tenant, layer=conv[0], query="database backup snapshots rule", token_budget=120, format="markdown")
    assert body["truncated_count"] == 1 and any(c["truncated"] for c in body["chunks"])
    assert body["total_tokens"] == count_tokens(body["context"], "o200k_base") <= 120
    assert (
        body["overflow"]["count"] > 0 and body["overflow"]["message"] == f"+{body['overflow']['count']} more available"
    )


def test_it_counts_with_the_models_tokenizer_and_warns_when_estimating(tenant: Tenant, conv: tuple[int, int]) -> None:
    gpt4 = ask(tenant, layer=conv[0], query="backups", model="gpt-4", token_budget=500)
    assert gpt4["encoding"] == "cl100k_base" and gpt4["total_tokens"] == count_tokens(gpt4["context"], "cl100k_base")
    other = ask(tenant, layer=conv[0], query="backups", model="claude-sonnet", token_budget=500)
    assert other["tokens_estimated"] and any("estimated" in w for w in other["warnings"])


def test_it_uses_a_profile_and_warns_about_an_unknown_one(tenant: Tenant, conv: tuple[int, int]) -> None:
    AgentProfile.objects.create(workspace=tenant.workspace, name="terse", token_budget=30, preferred_format="text")
    body = ask(tenant, layer=conv[0], query="backups", profile="terse")
    assert body["token_budget"] == 30 and body["format"] == "text" and body["total_tokens"] <= 30
    body = ask(tenant, layer=conv[0], query="backups", profile="ghost")
    assert body["token_budget"] == 8000 and any("ghost" in w for w in body["warnings"])


def test_it_traces_every_candidate(tenant: Tenant, conv: tuple[int, int]) -> None:
    items_embed_pending(workspace_id=tenant.workspace.pk)
    body = ask(tenant, layer=conv[0], query="backups", token_budget=40)
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()
    assert trace["candidates_considered"] == len(FACTS) == len(trace["trace"])
    decisions = {e["decision"] for e in trace["trace"]}
    assert "included" in decisions and "excluded" in decisions
    assert trace["tokens_used"] == body["total_tokens"] and trace["items_included"] == len(body["chunks"])
    assert tenant.client.get("/api/v1/traces/not-a-uuid/").status_code == 404


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"query": "x"}, "missing_layer"),
        ({"layer": 1}, "missing_query"),
        ({"layer": 1, "query": "x", "token_budget": 0}, "invalid_token_budget"),
        ({"layer": 1, "query": "x", "token_budget": "many"}, "invalid_token_budget"),
        ({"layer": 1, "query": "x", "format": "yaml"}, "invalid_format"),
        ({"layer": 1, "query": "x", "kinds": ["nope"]}, "invalid_kinds"),
        ({"layer": 1, "query": "x", "query_vector": ["a"]}, "invalid_query_vector"),
        ({"layer": "abc", "query": "x"}, "invalid_layer"),
    ],
)
def test_it_rejects_bad_requests_with_specific_codes(tenant: Tenant, body: dict, code: str) -> None:  # type: ignore[type-arg]
    body = {**body, "layer": tenant.root.pk} if body.get("layer") == 1 else body
    response = tenant.client.post("/api/v1/context/", body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == code


def test_it_rejects_malformed_json(tenant: Tenant) -> None:
    response = tenant.client.post("/api/v1/context/", data=b"{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "malformed_json"


def test_it_explains_an_empty_result(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    body = ask(tenant, layer=session, query="anything at all")
    assert body["chunks"] == [] and body["total_tokens"] == 0 and body["warnings"]


def test_assembly_runs_a_bounded_number_of_queries(
    tenant: Tenant, conv: tuple[int, int], max_statements: Callable[[int], AbstractContextManager[object]]
) -> None:
    items_embed_pending(workspace_id=tenant.workspace.pk)
    ask(tenant, layer=conv[0], query="backups")  # warm the query-embedding cache and tokenizer
    # key, layer, layer tree, vector search, keyword search, candidate rows, layer summaries, the record
    # insert (SET LOCAL + INSERT); each search also sets its statement timeout (set_config).
    with max_statements(11):
        body = ask(tenant, layer=conv[0], query="database backups")  # a new query: not from the cache
    assert body["cached"] is False


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    texts=st.lists(
        st.text(min_size=1, max_size=400).filter(lambda s: s.strip() and "\x00" not in s), min_size=1, max_size=8
    ),
    budget=st.integers(min_value=1, max_value=300),
    fmt=st.sampled_from(["json", "markdown", "text"]),
    model=st.sampled_from(["gpt-4o", "gpt-4", "mystery-model"]),
)
def test_the_contexts_own_token_count_never_exceeds_the_budget(
    tenant: Tenant, texts: list[str], budget: int, fmt: str, model: str
) -> None:
    session = Layer.objects.create(workspace=tenant.workspace, kind="session", name="h", parent=tenant.root)
    items = [{"kind": "document", "content": text, "pinned": i % 3 == 0} for i, text in enumerate(texts)]
    assert (
        tenant.client.post("/api/v1/items/bulk/", {"layer": session.pk, "items": items}, format="json").status_code
        == 201
    )
    body = ask(
        tenant, layer=session.pk, query=" ".join(texts)[:200] or "x", token_budget=budget, format=fmt, model=model
    )
    encoding = "o200k_base" if model == "gpt-4o" else "cl100k_base"
    assert body["total_tokens"] == count_tokens(body["context"], encoding) <= budget
