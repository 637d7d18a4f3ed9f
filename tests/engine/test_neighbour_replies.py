"""The turns next to a top hit (assembly/adjacency.py) rank by what they are to it (engine/rank.py
`answers`): the reply to a hit that asks a question takes the whole neighbour share, as the answer
does ("Did you see the otters?" -> "Yes, two of them, holding hands."); the turns around a statement
take half of it, so a weaker hit of the question comes before the small talk around a strong one.
Measured on the LoCoMo development set (README, Benchmarks)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from apps.engine import Candidate
from apps.engine.rank import RankContext, asks, rank

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def turn(id: int, content: str, *, sim: float | None = None, neighbour_of: int | None = None) -> Candidate:
    """A turn of one session said `id` minutes into it: a vector hit with `sim`, or a hit's neighbour."""
    return Candidate(
        id=id,
        kind="message",
        type="",
        layer_id=1,
        layer_name="s",
        content=content,
        created_at=NOW + timedelta(minutes=id),
        vector_similarity=sim,
        vector_rank=id if sim is not None else None,
        neighbour_of=neighbour_of,
    )


def _relevance() -> dict[str, float]:
    candidates = [
        turn(1, "morning!! you around?", neighbour_of=2),
        turn(2, "We saw so many otters at the river today.", sim=0.90),
        turn(3, "haha nice, long day tho", neighbour_of=2),
        turn(4, "ok", neighbour_of=5),
        turn(5, "Did you see how the otters sleep?", sim=0.88),
        turn(6, "Holding hands, so they don't drift apart.", neighbour_of=5),
        turn(7, "The otters had two pups in spring.", sim=0.84),
        turn(8, "Lunch was good.", sim=0.80),
    ]
    names = {1: "before statement", 2: "statement", 3: "after statement", 4: "before question"}
    names |= {5: "question", 6: "reply", 7: "weaker hit", 8: "weakest hit"}
    ranked = rank(candidates, context=RankContext(now=NOW))
    return {names[s.candidate.id]: s.parts["relevance"] for s in ranked}


def test_a_weaker_hit_ranks_before_the_small_talk_around_a_stronger_one() -> None:
    relevance = _relevance()
    assert relevance["weaker hit"] > relevance["before statement"] == relevance["after statement"], relevance
    assert relevance["weaker hit"] > relevance["before question"], relevance


def test_the_reply_to_a_hit_that_asks_keeps_the_whole_share() -> None:
    relevance = _relevance()
    assert relevance["reply"] >= relevance["weaker hit"] > relevance["after statement"], relevance
    assert relevance["reply"] > relevance["before question"], relevance


def test_a_question_is_a_turn_that_ends_asking() -> None:
    assert asks("Did you see them?") and asks("what's its name?? 🙂") and asks('She said "really?"')
    assert not asks("Why? Because it rained.") and not asks("No idea.")


def test_a_question_is_told_in_linear_time_whatever_the_turn() -> None:
    assert [asks(t) for t in ("ok?", 'ok? :) "', "a?b", "?", "", "no", "why?\n")] == [
        True, True, False, True, False, False, True
    ]  # fmt: skip
    started = time.perf_counter()
    assert not asks("?" * 40_000 + "x")  # the pattern before took 8.8 s on it
    assert time.perf_counter() - started < 0.5
