"""A layer or community summary, known by its similarity to the query and returned by no search,
is ranked like a vector hit of that similarity, and left out under the floor of the query's best hits."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.engine import Candidate, RankContext, rank
from apps.engine.floor import HitFloor

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def hit(id: int, similarity: float, rank_: int) -> Candidate:
    return Candidate(
        id=id,
        kind="message",
        type="",
        layer_id=1,
        layer_name="session",
        content=f"turn {id}",
        created_at=NOW,
        vector_similarity=similarity,
        vector_rank=rank_,
    )


def summary(id: int, similarity: float | None) -> Candidate:
    return Candidate(
        id=id,
        source="summary",
        kind="summary",
        type="",
        layer_id=id,
        layer_name="project",
        content=f"summary {id}",
        created_at=NOW,
        importance=0.8,
        origin="summary",
        vector_similarity=similarity,
    )


HITS = [hit(i, 0.90 - 0.01 * i, i) for i in range(1, 11)]  # 0.89 .. 0.80


def relevance(ranked: list, key: tuple[str, int]) -> float:  # type: ignore[type-arg]
    return next(s.parts["relevance"] for s in ranked if s.candidate.key == key)


def test_a_summary_takes_the_place_a_hit_of_its_similarity_would_take() -> None:
    close, far = summary(101, 0.875), summary(102, 0.805)
    ranked = rank([*HITS, close, far], context=RankContext(now=NOW))
    order = [s.candidate.key for s in ranked]
    assert order.index(("summary", 101)) < order.index(("item", 3))  # between the 2nd (0.88) and 3rd (0.87) hit
    assert relevance(ranked, ("summary", 101)) == relevance(ranked, ("item", 3))
    assert relevance(ranked, ("summary", 101)) > relevance(ranked, ("summary", 102))
    assert relevance(ranked, ("summary", 102)) < relevance(ranked, ("item", 9))
    parts = next(s.parts for s in ranked if s.candidate.key == ("summary", 101))
    assert parts["vector_similarity"] == 0.875 and "vector_rank" not in parts  # no search returned it


def test_the_hits_keep_their_relevance_whatever_summaries_come_along() -> None:
    alone = rank(HITS, context=RankContext(now=NOW))
    beside = rank([*HITS, summary(101, 0.5), summary(102, 0.99)], context=RankContext(now=NOW))
    assert {s.candidate.key: s.parts["relevance"] for s in alone} == {
        s.candidate.key: s.parts["relevance"] for s in beside if s.candidate.source == "item"
    }


def test_a_summary_without_a_vector_is_ranked_as_before() -> None:
    ranked = rank([*HITS, summary(101, None)], context=RankContext(now=NOW))
    assert relevance(ranked, ("summary", 101)) == 0.0


def test_the_floor_leaves_out_only_summaries_less_similar_than_the_best_hits() -> None:
    floor = HitFloor.of(similarities=[0.89, 0.85], keyword_scores=[])
    assert floor.below(summary(1, 0.80))
    assert not floor.below(summary(2, 0.87))  # within the margin of the best hit
    assert not floor.below(summary(3, None))  # not embedded yet: no floor
    assert not floor.below(HITS[-1])  # a search hit is never left out by the floor
    assert not HitFloor().below(summary(4, 0.1))  # no vector hit: nothing to measure against


def test_a_summary_closer_than_every_hit_raises_the_floor_for_the_others() -> None:
    floor = HitFloor.of(similarities=[0.80], keyword_scores=[]).raised([summary(1, 0.90), summary(2, 0.85), HITS[0]])
    assert floor.best_similarity == 0.90
    assert not floor.below(summary(1, 0.90)) and floor.below(summary(2, 0.85))
    assert HitFloor().raised([summary(1, 0.9)]) == HitFloor()  # no vector hit: still no floor
