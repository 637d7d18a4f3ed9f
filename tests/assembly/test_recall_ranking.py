"""Issue 13's ranking pieces: score fusion of the two searches, the lift of a layer whose hits score well
together, and the turns said next to a top hit."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from apps.assembly.adjacency import NEIGHBOUR_SEED_RANK, neighbour_seed_rank
from apps.assembly.retrieval import neighbour_turns, search_hits
from apps.engine import Candidate
from apps.engine.fusion import fusion_scores, layer_focus
from apps.engine.rank import RankContext, rank
from apps.layers.filters import ItemFilters
from tests.assembly.otters_data import otter_turns
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant


def hits_and_neighbours(filters: ItemFilters, seeds: int = NEIGHBOUR_SEED_RANK) -> list[Candidate]:
    """The hits for "otters" and the turns next to the first `seeds` of them (apps/assembly/sources/)."""
    hits = search_hits(filters=filters, layer_names={}, query="otters", query_vector=None, limit=50)
    known = {c.id: c for c in hits.candidates}
    return [*hits.candidates, *neighbour_turns(known, hits.parent_of, filters, {}, seeds)]


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def hit(
    id: int, *, sim: float | None = None, kw: float | None = None, layer_id: int = 1, metadata: dict | None = None
) -> Candidate:
    return Candidate(
        id=id,
        kind="message",
        type="",
        layer_id=layer_id,
        metadata=metadata or {},
        layer_name="s",
        content=f"turn {id}",
        created_at=NOW,
        vector_similarity=sim,
        vector_rank=1 if sim is not None else None,
        keyword_score=kw,
        keyword_rank=1 if kw is not None else None,
    )


def test_a_hit_far_ahead_in_one_search_outranks_hits_mediocre_in_both() -> None:
    hits = [hit(1, kw=9.0), hit(2, sim=0.84, kw=1.0), hit(3, sim=0.85, kw=1.0), hit(4, sim=0.80)]
    scores = fusion_scores(hits, vector=0.9, keyword=1.1)
    assert max(scores, key=lambda k: scores[k]) == ("item", 1)
    assert scores[("item", 4)] == 0.0  # the lowest similarity of the hits scales to 0
    assert scores[("item", 3)] > scores[("item", 2)]


def test_one_search_alone_still_orders_the_hits() -> None:
    scores = fusion_scores([hit(1, sim=0.9), hit(2, sim=0.8)], vector=1.0, keyword=1.0)
    assert scores == {("item", 1): 1.0, ("item", 2): 0.0}
    assert fusion_scores([hit(1, sim=0.9)], vector=1.0, keyword=1.0) == {("item", 1): 1.0}
    assert fusion_scores([hit(1, kw=0.0)], vector=1.0, keyword=1.0) == {("item", 1): 0.0}


def test_a_layer_whose_hits_score_well_together_lifts_them_above_a_lone_better_hit() -> None:
    # session 20 talks about the topic (three good hits); session 10 shares one word with the question
    hits = [
        hit(1, sim=0.90, layer_id=10),
        replace(hit(2, sim=0.89, layer_id=20), content="turn 2?"),  # its reply (6) takes the whole share
        hit(3, sim=0.88, layer_id=20),
        hit(4, sim=0.87, layer_id=20),
        hit(5, sim=0.80, layer_id=10),
    ]
    focus = layer_focus(hits, fusion_scores(hits, vector=0.9, keyword=1.1))
    assert focus[20] == 1.0 and 0 < focus[10] < 1
    assert layer_focus(hits[1:4], fusion_scores(hits[1:4], vector=0.9, keyword=1.1)) == {}  # one layer: no lift
    neighbour = Candidate(
        id=6,
        kind="message",
        type="",
        layer_id=20,
        layer_name="s",
        content="turn 6",
        created_at=NOW,
        neighbour_of=2,
    )
    ranked = rank([*hits, neighbour], context=RankContext(now=NOW))
    order = [s.candidate.id for s in ranked]
    assert order.index(2) < order.index(1) and order.index(4) < order.index(1)
    relevance = {s.candidate.id: s.parts["relevance"] for s in ranked}
    assert relevance[6] >= relevance[1]  # the neighbour of a hit in the lifted session is lifted too
    lone = [hit(1, sim=0.90, layer_id=10), hit(2, sim=0.89, layer_id=20), hit(5, sim=0.80, layer_id=30)]
    assert [s.candidate.id for s in rank(lone, context=RankContext(now=NOW))] == [1, 2, 5]  # one hit per layer


@pytest.mark.django_db
def test_the_turns_said_next_to_a_top_hit_come_along_without_parent_links(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="chat")
    said = [
        "Morning! How was the weekend?",
        "Great, we finally went to the Lisbon aquarium with the kids.",
        "What did they like most?",
        "The sea otters, by far.",
        "Anything planned for next weekend?",
        "Probably a bike ride along the river.",
    ]
    start = datetime(2025, 5, 3, 9, tzinfo=UTC)
    bulk(
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
            for i, text in enumerate(said)
        ],
    )
    root = tenant.root.pk
    body = ask(tenant, layer=root, query="Which aquarium did they visit in Lisbon?", token_budget=400, format="text")
    ids = [c["external_id"] for c in body["chunks"]]
    assert ids[0] == "t1"
    # said just before and after the hit, they rank right behind it though neither shares a word with the query
    assert set(ids[1:3]) == {"t0", "t2"}


def test_the_number_of_hits_that_bring_their_neighbours_grows_with_the_budget() -> None:
    assert [neighbour_seed_rank(b) for b in (100, 500, 1000, 2000, 4000)] == [5, 5, 5, 10, 20]


@pytest.mark.django_db
def test_a_larger_budget_brings_the_neighbours_of_lower_hits(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="river")
    start = datetime(2025, 5, 3, 9, tzinfo=UTC)
    turns = []
    for k in range(7):  # hit k matches "otters" in a longer turn than hit k - 1 (a lower keyword rank)
        turns += [f"The otters {'swam along the river bank ' * k}today.", f"Filler remark number {k}."]
    bulk(
        tenant,
        session,
        [
            {
                "kind": "message",
                "role": "user",
                "content": text,
                "external_id": f"t{i}",
                "created_at": (start + timedelta(seconds=i)).isoformat(),
            }
            for i, text in enumerate(turns)
        ],
    )
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))

    def neighbours(seeds: int) -> set[str]:
        return {c.external_id or "" for c in hits_and_neighbours(filters, seeds) if c.origin == "neighbour"}

    # fillers sit between hits: t11 follows the 6th hit (t10), t13 the 7th (t12)
    assert neighbours(5) == {"t1", "t3", "t5", "t7", "t9"}
    assert neighbours(10) == {"t1", "t3", "t5", "t7", "t9", "t11", "t13"}


@pytest.mark.django_db
def test_neighbours_name_the_hit_they_sit_next_to_and_keep_their_own_metadata(tenant: Tenant) -> None:
    # Rows come from raw SQL (jsonb as text) and the adjacency query is a CTE of the rows' statement.
    session = otter_turns(tenant, "brook", datetime(2025, 5, 3, 9, tzinfo=UTC), timedelta(seconds=1), moods=True)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(session,))
    by_external = {c.external_id: c for c in hits_and_neighbours(filters)}
    assert by_external["b1"].origin == "keyword"
    assert by_external["b1"].metadata == {"mood": "m1"}
    hit_id = by_external["b1"].id
    assert by_external["b0"].origin == by_external["b2"].origin == "neighbour"
    assert (by_external["b0"].metadata, by_external["b0"].neighbour_of) == ({"mood": "m0"}, hit_id)
    assert (by_external["b2"].metadata, by_external["b2"].neighbour_of) == ({"mood": "m2"}, hit_id)
