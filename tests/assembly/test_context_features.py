"""The complete engine through the API: zones and caps, conversations, filters, packages, related
items, error hints, layer summaries, templates and ranking functions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.error_patterns.models import ErrorPattern
from apps.layers.models import Item, Layer, Relationship
from apps.summaries.models import Summary
from tests.patterns_data import missing_table_pattern
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant) -> int:
    return layer(tenant, "session", tenant.root.pk, external_id="sess-1")


def test_the_window_caps_the_budget_and_sets_the_zone(tenant: Tenant, session: int) -> None:
    bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": f"Backup fact {i}."} for i in range(20)])
    body = ask(tenant, layer=session, query="backup", token_budget=8000, context_window=1000, tokens_used=500)
    assert body["token_budget"] == 350 and body["zone"] == "normal" and body["total_tokens"] <= 350
    soft = ask(tenant, layer=session, query="backup", context_window=1000, tokens_used=650)
    assert soft["zone"] == "soft_warning" and soft["token_budget"] == 200
    wrap = ask(tenant, layer=session, query="backup", context_window=1000, tokens_used=900)
    assert wrap["zone"] == "wrap_up" and wrap["chunks"] == []
    emergency = ask(tenant, layer=session, query="backup", context_window=1000, tokens_used=960)
    assert emergency["zone"] == "emergency" and emergency["context"] == "" and emergency["warnings"]
    bad = tenant.client.post("/api/v1/context/", {"layer": session, "query": "x", "tokens_used": 5}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_tokens_used"


def test_a_sessions_recent_turns_come_in_by_distance(tenant: Tenant, session: int) -> None:
    now = timezone.now()
    turns = [
        {
            "kind": "message",
            "role": "user" if i % 2 == 0 else "assistant",
            "external_id": f"t{i}",
            "content": f"Turn {i} talks about topic {i}. " + "More detail follows here. " * 20,
            "created_at": (now - timedelta(minutes=60 - i)).isoformat(),
        }
        for i in range(60)
    ]
    bulk(tenant, session, turns)
    body = ask(tenant, layer=session, query="zebra unrelated words", token_budget=100_000)
    depth = {c["external_id"]: c["depth"] for c in body["chunks"] if c["kind"] == "message"}
    assert depth["t59"] == "full" and depth["t54"] == "full"  # distance 0 and 5
    assert depth["t53"] == "summary" and depth["t39"] == "summary"  # distance 6 and 20
    assert depth["t38"] == "title" and depth["t9"] == "title"  # distance 21 and 50
    assert "t8" not in depth  # distance 51: hidden
    found = ask(tenant, layer=session, query="Turn 3 talks about topic 3", token_budget=100_000)
    assert {c["external_id"]: c["depth"] for c in found["chunks"]}.get("t3") == "full"  # a search hit is kept whole


def test_conversation_id_names_the_window_and_filters_other_conversations(tenant: Tenant, session: int) -> None:
    other = layer(tenant, "session", tenant.root.pk, external_id="sess-2")
    bulk(tenant, session, [{"kind": "message", "role": "user", "content": "Deploy the billing service."}])
    bulk(tenant, other, [{"kind": "message", "role": "user", "content": "Deploy the search service."}])
    body = ask(tenant, layer=tenant.root.pk, query="deploy service", conversation_id="sess-2")
    assert [c["text"] for c in body["chunks"] if c["kind"] == "message"] == ["Deploy the search service."]
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()["trace"]
    assert "Deploy the billing service." not in body["context"] and len(trace) == 1  # never searched
    missing = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "x", "conversation_id": "no"}, format="json"
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "conversation_not_found"


def test_min_confidence_filters_items_and_the_group_ranks_them(tenant: Tenant, session: int) -> None:
    bulk(
        tenant,
        session,
        [
            {"kind": "memory", "type": "fact", "content": "Cache TTL is 60 seconds.", "confidence": 0.9},
            {"kind": "memory", "type": "fact", "content": "Cache TTL might be 5 seconds.", "confidence": 0.2},
            {"kind": "package", "content": "Cache research for group A.", "group_id": "A"},
            {"kind": "package", "content": "Cache research for group B.", "group_id": "B"},
        ],
    )
    texts = [c["text"] for c in ask(tenant, layer=session, query="cache", min_confidence=0.5, group_id="A")["chunks"]]
    assert "Cache TTL is 60 seconds." in texts and "Cache TTL might be 5 seconds." not in texts
    # the group ranks (same-group match), it does not filter
    assert texts.index("Cache research for group A.") < texts.index("Cache research for group B.")


def test_packages_are_limited_per_agent_type_with_an_overflow_indicator(tenant: Tenant, session: int) -> None:
    bulk(
        tenant,
        session,
        [{"kind": "package", "content": f"Package {i} about the cache.", "priority": "high"} for i in range(10)],
    )
    body = ask(tenant, layer=session, query="cache package", kinds=["package"], agent_type="developer")
    assert len(body["chunks"]) == 3 and body["overflow"] == {"count": 7, "message": "+7 more available"}
    tenant.client.post("/api/v1/profiles/", {"name": "qa", "agent_type": "qa", "retrieval_limit": 5}, format="json")
    assert len(ask(tenant, layer=session, query="cache package", kinds=["package"], profile="qa")["chunks"]) == 5
    empty = layer(tenant, "session", tenant.root.pk)
    none = ask(tenant, layer=empty, query="cache", kinds=["package"], group_id="g")
    assert none["chunks"] == [] and "No context packages found" in none["warnings"]


def test_related_items_are_expanded_within_the_budget(tenant: Tenant, session: int) -> None:
    a, b, c = bulk(
        tenant,
        session,
        [
            {"kind": "memory", "type": "decision", "content": "We use PostgreSQL for search."},
            {"kind": "memory", "type": "fact", "content": "Operational load was the deciding factor."},
            {"kind": "memory", "type": "fact", "content": "The ops team has two people."},
        ],
    )
    Relationship.objects.create(workspace=tenant.workspace, source_id=a, target_id=b, kind="supports")
    Relationship.objects.create(workspace=tenant.workspace, source_id=b, target_id=c, kind="relates_to")
    plain = {x["id"] for x in ask(tenant, layer=session, query="PostgreSQL search")["chunks"]}
    assert plain == {a}
    one_hop = {x["id"] for x in ask(tenant, layer=session, query="PostgreSQL search", expand_related=1)["chunks"]}
    assert one_hop == {a, b}
    two_hops = {x["id"] for x in ask(tenant, layer=session, query="PostgreSQL search", expand_related=2)["chunks"]}
    assert two_hops == {a, b, c}


def test_error_hints_come_first_for_the_agents_error(tenant: Tenant, session: int) -> None:
    now = timezone.now()
    bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "Migrations run on deploy."}])
    missing_table_pattern(tenant.workspace)
    ErrorPattern.objects.create(
        workspace=tenant.workspace,
        signature="psycopg.errors.undefinedtable: relation # does not exist at all",
        error_excerpt="x",
        solution="Low confidence fix.",
        confidence=0.5,
        first_seen=now,
        last_seen=now,
    )
    body = ask(
        tenant,
        layer=session,
        query="deploy migrations",
        error='psycopg.errors.UndefinedTable: relation "orders" does not exist',
    )
    assert body["chunks"][0]["source"] == "error_hint" and "migrate" in body["chunks"][0]["text"]
    assert all("Low confidence" not in c["text"] for c in body["chunks"])
    assert ask(tenant, layer=session, query="deploy migrations")["chunks"][0]["source"] == "item"


def test_layer_summaries_fall_back_to_the_depth_that_fits(tenant: Tenant, session: int) -> None:
    now = timezone.now()
    for depth, text in (
        ("detailed", "Detailed summary. " * 100),
        ("paragraph", "Paragraph summary. " * 20),
        ("sentence", "The company builds agents."),
    ):
        Summary.objects.create(
            workspace=tenant.workspace,
            layer=tenant.root,
            depth=depth,
            text=text,
            token_count=0,
            source_hash="h",
            generated_at=now,
            provider="test",
        )
    wide = ask(tenant, layer=session, query="agents", token_budget=2000, format="text")
    narrow = ask(tenant, layer=session, query="agents", token_budget=30, format="text")
    assert [(c["source"], c["depth"]) for c in wide["chunks"]] == [("summary", "detailed")]
    assert [(c["source"], c["depth"]) for c in narrow["chunks"]] == [("summary", "sentence")]


def test_templates_and_ranking_functions_are_chosen_per_request(tenant: Tenant, session: int) -> None:
    bulk(tenant, session, [{"kind": "memory", "type": "decision", "content": "Ship weekly."}])
    chat = ask(tenant, layer=session, query="ship", template="chat", format="text")
    assert chat["context"] == "[memory/decision] Ship weekly."
    bad = tenant.client.post("/api/v1/context/", {"layer": session, "query": "x", "template": "nope"}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "unknown_template"
    bad = tenant.client.post("/api/v1/context/", {"layer": session, "query": "x", "ranking": "nope"}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "unknown_ranking"
    assert ask(tenant, layer=session, query="ship", ranking="recency")["chunks"]


def test_every_item_kind_is_packed_with_its_depth_in_the_response(tenant: Tenant, session: int) -> None:
    bulk(tenant, session, [{"kind": "document", "content": "Alpha. " * 400, "title": "Long doc"}])
    body = ask(tenant, layer=session, query="alpha", token_budget=80, format="json", timeout_ms=0)
    (chunk,) = body["chunks"]
    assert chunk["depth"] == "full" and chunk["truncated"] and chunk["tokens"] <= 80
    assert Item.objects.filter(layer_id=session).count() == 1 and Layer.objects.filter(pk=session).exists()


def test_preview_returns_the_same_context_with_its_trace_and_a_what_if_table(tenant: Tenant, session: int) -> None:
    bulk(tenant, session, [{"kind": "document", "content": f"Runbook step {i}. " * 40} for i in range(12)])
    request = {"layer": session, "query": "runbook step", "token_budget": 1500, "format": "text"}
    real = ask(tenant, **request)
    preview = tenant.client.post("/api/v1/context/preview/", request, format="json").json()
    assert preview["context"] == real["context"] and preview["chunks"] == real["chunks"]
    assert len(preview["trace"]) == 12 and {e["decision"] for e in preview["trace"]} >= {"included", "excluded"}
    rows = {row["token_budget"]: row for row in preview["what_if"]}
    assert list(rows) == [1000, 2000, 4000, 8000]
    assert all(rows[b]["tokens_used"] <= b for b in rows)
    assert rows[1000]["items_included"] <= rows[2000]["items_included"] <= rows[8000]["items_included"] == 12
    bad = tenant.client.post("/api/v1/context/preview/", {"layer": session}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "missing_query"


def test_identical_requests_come_from_the_cache_until_content_in_scope_changes(tenant: Tenant, session: int) -> None:
    (item_id,) = bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "Backups run at night."}])
    first = ask(tenant, layer=session, query="backups", format="text")
    again = ask(tenant, layer=session, query="backups", format="text")
    assert (first["cached"], again["cached"]) == (False, True)
    assert again["context"] == first["context"] and again["trace_id"] == first["trace_id"]
    assert ask(tenant, layer=session, query="backups", format="markdown")["cached"] is False  # another request
    tenant.client.patch(f"/api/v1/items/{item_id}/", {"content": "Backups run at noon."}, format="json")
    changed = ask(tenant, layer=session, query="backups", format="text")
    assert changed["cached"] is False and "noon" in changed["context"]
    bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "Backups are encrypted."}])
    assert "encrypted" in ask(tenant, layer=session, query="backups", format="text")["context"]
    metrics = tenant.client.get("/metrics").content.decode()
    assert "context_architect_assembly_cache_hit_rate" in metrics
    assert "context_architect_assembly_layers_included_bucket" in metrics
