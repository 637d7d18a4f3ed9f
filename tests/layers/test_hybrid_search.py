"""The one hybrid search (apps/layers/hybrid_search.py): fused by score, bounded by a deadline."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import numpy as np
import pytest
from django.test import override_settings

from apps.assembly.timings import StageTimes
from apps.core import embeddings
from apps.core.deadline import Deadline
from apps.engine import Candidate
from apps.engine.fusion import fusion_scores
from apps.layers.embedder import items_embed_pending
from apps.layers.filters import ItemFilters
from apps.layers.hybrid_search import HybridHits, hybrid_search
from apps.layers.keyword_search import KeywordHit
from apps.layers.services import ItemInput, items_create
from apps.layers.vectors import VectorHit
from tests.conversations.sessions import AUTH, DATABASE, make_session, messages
from tests.support.tenants import Tenant

FOUND = HybridHits(
    vector=[VectorHit(1, 0.9), VectorHit(2, 0.8), VectorHit(3, 0.7)],
    keyword=[KeywordHit(3, 2.0), KeywordHit(4, 1.0)],
    vector_used=True,
)


def test_the_fused_order_is_the_engines_score_fusion() -> None:
    fused = FOUND.fused()
    # 3: keyword best (1.1) + vector worst (0); 1: vector best (0.9); 4: half the best keyword score; 2: half-way cosine
    assert [h.item_id for h in fused] == [3, 1, 4, 2]
    assert [round(h.score, 6) for h in fused] == [1.1, 0.9, 0.55, 0.45]
    assert (fused[0].vector_rank, fused[0].keyword_rank, fused[0].similarity, fused[0].keyword_score) == (
        3,
        1,
        0.7,
        2.0,
    )
    assert (fused[2].vector_rank, fused[2].keyword_rank) == (None, 2)
    # the same numbers as the engine's ranking, which fuses candidates with the same function
    candidates = [
        Candidate(
            id=h.item_id,
            kind="memory",
            type="",
            layer_id=1,
            layer_name="",
            content="",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            vector_similarity=h.similarity,
            keyword_score=h.keyword_score,
        )
        for h in fused
    ]
    engine = fusion_scores(candidates, vector=0.9, keyword=1.1)
    assert {k[1]: round(v, 6) for k, v in engine.items()} == {h.item_id: round(h.score, 6) for h in fused}


def test_ties_keep_the_better_search_rank() -> None:
    tied = HybridHits(vector=[VectorHit(5, 0.8), VectorHit(6, 0.8)], keyword=[], vector_used=True)
    assert [h.item_id for h in tied.fused()] == [5, 6]
    assert [h.item_id for h in tied.fused(vector=1.0, keyword=0.0)] == [5, 6]


@pytest.mark.django_db
def test_an_expired_deadline_skips_the_vector_search_but_keyword_search_still_runs(tenant: Tenant) -> None:
    items = items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", content=t)
            for t in ("Backups are kept 35 days.", "Deploys on Tuesday.")
        ],
    )
    items_embed_pending(workspace_id=tenant.workspace.pk)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    vector = np.asarray(embeddings.embed_query("how long are backups kept")[0])
    full = hybrid_search(
        filters=filters, query="backups", query_vector=vector, limit=10, deadline=Deadline(limit_ms=None)
    )
    assert full.vector_used and {h.item_id for h in full.vector} == {i.pk for i in items}
    assert [h.item_id for h in full.keyword] == [items[0].pk]
    assert full.fused()[0].item_id == items[0].pk

    late = Deadline(limit_ms=1, started=time.perf_counter() - 1)
    partial = hybrid_search(filters=filters, query="backups", query_vector=vector, limit=10, deadline=late)
    assert not partial.vector_used and partial.vector == [] and late.skipped == ["vector search"]
    assert [h.item_id for h in partial.keyword] == [items[0].pk]  # the keyword floor


@pytest.mark.django_db
def test_the_history_tool_searches_within_its_deadline(tenant: Tenant) -> None:
    session = make_session(tenant)
    auth = messages(tenant, session, AUTH)
    messages(tenant, session, DATABASE)
    items_embed_pending(workspace_id=tenant.workspace.pk)

    def history(query: str) -> dict:  # type: ignore[type-arg]
        response = tenant.client.get("/api/v1/history/", {"layer": session, "query": query, "format": "json"})
        assert response.status_code == 200, response.json()
        return response.json()

    body = history("login and authentication")
    assert body["warnings"] == [] and {m["id"] for m in body["messages"]} <= set(auth)
    assert max(m["relevance"] for m in body["messages"]) > 0.5
    with override_settings(HISTORY_TIMEOUT_MS=1):  # the query embedding alone takes longer
        late = history("which login locks the account after failed attempts")
    assert any("deadline" in w and "vector search" in w for w in late["warnings"])
    assert late["messages"] and {m["id"] for m in late["messages"]} <= set(auth)  # keyword search still answers


@pytest.mark.django_db
def test_a_vector_still_being_computed_is_awaited_after_the_keyword_search(tenant: Tenant) -> None:
    items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", content=t)
            for t in ("Backups are kept 35 days.", "Deploys on Tuesday.", "Backups run at night.")
        ],
    )
    items_embed_pending(workspace_id=tenant.workspace.pk)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    vector = np.asarray(embeddings.embed_query("how long are backups kept")[0])
    timings = StageTimes()
    searched_first: list[bool] = []

    def pending() -> np.ndarray:
        searched_first.append("keyword_search" in timings.ms)
        return vector

    found = hybrid_search(filters=filters, query="backups kept", query_vector=pending, limit=10, timings=timings)
    known = hybrid_search(filters=filters, query="backups kept", query_vector=vector, limit=10)
    assert searched_first == [True]  # the keyword search overlaps the embedding
    assert found == known and found.vector_used and len(found.vector) == 3

    keyword_only = hybrid_search(filters=filters, query="backups kept", query_vector=lambda: None, limit=10)
    assert not keyword_only.vector_used and keyword_only.keyword == known.keyword
