"""Every candidate in the trace says where it came from (engine/candidates.py ORIGINS), set where it is built."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from apps.engine.candidates import ORIGINS, community_candidate, item_candidate, search_origin
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Relationship
from apps.summaries.models import Summary
from tests.patterns_data import missing_table_pattern
from tests.support.api import bulk, layer
from tests.support.tenants import Tenant

SAID = [
    "Morning! How was the weekend?",
    "Great, we finally went to the Lisbon aquarium with the kids.",
    "What did they like most?",
    "The sea otters, by far.",
    "Anything planned for next weekend?",
    "Probably a bike ride along the river.",
]


def preview(t: Tenant, **body: object) -> dict:  # type: ignore[type-arg]
    response = t.client.post("/api/v1/context/preview/", {"token_budget": 4000, **body}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_search_origin_names_the_searches_that_found_an_item() -> None:
    assert search_origin(vector_rank=1, keyword_rank=3) == "both"
    assert search_origin(vector_rank=2, keyword_rank=None) == "vector"
    assert search_origin(vector_rank=None, keyword_rank=1, pinned=True) == "keyword"
    assert search_origin(vector_rank=None, keyword_rank=None, pinned=True) == "pinned"
    assert {"vector", "keyword", "both", "pinned", "hint", "summary", "related", "conversation", "neighbour"} <= set(
        ORIGINS
    )


def test_the_builders_fill_a_candidate_from_a_row_or_a_community() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    row = {"id": 7, "layer_id": 3, "content": "Hello.", "created_at": now, "agent_types": ["coder"], "metadata": None}
    c = item_candidate(row, layer_name="chat", origin="conversation", distance=4)
    assert (c.id, c.kind, c.layer_name, c.origin, c.distance, c.agent_types, c.metadata) == (
        7,
        "message",
        "chat",
        "conversation",
        4,
        ("coder",),
        {},
    )
    community = SimpleNamespace(
        pk=9, kind="task", key="T-1", layer_id=3, title="Deploy", summary="We deployed.", last_at=now
    )
    cc = community_candidate(community, layer_name="chat", importance=0.7)  # type: ignore[arg-type]
    assert (cc.key, cc.origin, cc.importance, [r.depth for r in cc.rungs]) == (
        ("community", 9),
        "community",
        0.7,
        ["full", "title"],
    )


@pytest.mark.django_db
def test_each_trace_entry_carries_its_origin(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="chat")
    start = timezone.now() - timedelta(hours=1)
    turns = bulk(
        tenant,
        session,
        [
            {
                "kind": "message",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": text,
                "external_id": f"t{i}",
                "created_at": (start + timedelta(seconds=i)).isoformat(),
            }
            for i, text in enumerate(SAID)
        ],
    )
    pinned, kids, otters = bulk(
        tenant,
        tenant.root.pk,
        [
            {"kind": "document", "content": "Pinned: replies stay short.", "pinned": True},
            {"kind": "memory", "type": "fact", "content": "The kids are called Ana and Rui.", "external_id": "kids"},
            {"kind": "memory", "type": "fact", "content": "Rui collects stones.", "external_id": "stones"},
        ],
    )
    Relationship.objects.create(workspace=tenant.workspace, source_id=turns[1], target_id=kids, kind="relates_to")
    Relationship.objects.create(workspace=tenant.workspace, source_id=kids, target_id=otters, kind="relates_to")
    now = timezone.now()
    missing_table_pattern(tenant.workspace)
    Summary.objects.create(
        workspace=tenant.workspace,
        layer=tenant.root,
        depth="sentence",
        text="A family chat.",
        token_count=0,
        source_hash="h",
        generated_at=now,
        provider="test",
    )
    body = preview(
        tenant,
        layer=session,
        query="Which aquarium in Lisbon?",
        expand_related=2,
        error='psycopg.errors.UndefinedTable: relation "orders" does not exist',
    )
    origin = {(e["source"], e["id"]): e["origin"] for e in body["trace"]}
    assert origin[("item", turns[1])] == "keyword"  # not embedded yet: keyword search only
    assert origin[("item", turns[0])] == origin[("item", turns[2])] == "neighbour"
    assert {origin[("item", t)] for t in turns[3:]} == {"conversation"}
    assert origin[("item", pinned)] == "pinned"
    assert origin[("item", kids)] == origin[("item", otters)] == "related"
    assert [o for (source, _), o in origin.items() if source == "error_hint"] == ["hint"]
    assert origin[("summary", tenant.root.pk)] == "summary"
    recorded = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()["trace"]
    assert {(e["source"], e["id"]): e["origin"] for e in recorded} == origin

    items_embed_pending(workspace_id=tenant.workspace.pk)
    searched = preview(tenant, layer=tenant.root.pk, query="Lisbon aquarium")
    found = {e["id"]: e["origin"] for e in searched["trace"] if e["source"] == "item"}
    assert found[turns[1]] == "both"
    assert "vector" in found.values()  # every embedded item is a vector hit in a workspace this small
    assert set(found.values()) <= set(ORIGINS)
