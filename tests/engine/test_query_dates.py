"""A query that names a date is about what was said then (engine/dates.py `query_period`): the hits
said in that period are lifted (engine/rank.py DATE_LIFT). Measured on the LoCoMo development set
(README, Benchmarks)."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.engine import Candidate
from apps.engine.dates import query_period
from apps.engine.rank import RankContext, rank


def test_it_reads_a_month_or_a_day_with_its_year() -> None:
    assert query_period("What did Dave open in May 2023?") == (
        datetime(2023, 5, 1, tzinfo=UTC),
        datetime(2023, 6, 1, tzinfo=UTC),
    )
    assert query_period("and in december, 2024") == (
        datetime(2024, 12, 1, tzinfo=UTC),
        datetime(2025, 1, 1, tzinfo=UTC),
    )
    a_week = (datetime(2023, 8, 8, tzinfo=UTC), datetime(2023, 8, 15, tzinfo=UTC))
    assert query_period("What workshop did he get picked for on 11 August, 2023?") == a_week
    assert query_period("on August 11th 2023") == a_week


def test_it_reads_no_date_without_a_year_or_that_does_not_exist() -> None:
    for text in ("Who headlined the festival in October?", "what did we say last week", "back in 2023", ""):
        assert query_period(text) is None, text
    assert query_period("on 31 February 2023") is None
    # A week around the first or last day a datetime holds overflows: no period, never an error.
    for text in ("on 1 January, 0001", "on 2 January 0001", "on 31 December, 9999", "in December 9999"):
        assert query_period(text) is None, text


def turn(id: int, sim: float, said: datetime) -> Candidate:
    return Candidate(
        id=id,
        kind="message",
        type="",
        layer_id=id,
        layer_name="s",
        content=f"turn {id}",
        created_at=said,
        vector_similarity=sim,
        vector_rank=id,
    )


def test_a_hit_said_in_the_period_the_query_names_comes_first() -> None:
    now = datetime(2024, 1, 1, tzinfo=UTC)
    hits = [
        turn(1, 0.90, datetime(2023, 3, 10, tzinfo=UTC)),
        turn(2, 0.88, datetime(2023, 5, 20, tzinfo=UTC)),
        turn(3, 0.80, datetime(2023, 7, 1, tzinfo=UTC)),
    ]
    undated = rank(hits, context=RankContext(now=now))
    assert [s.candidate.id for s in undated] == [1, 2, 3]
    dated = rank(hits, context=RankContext(now=now, period=query_period("What did he open in May 2023?")))
    assert [s.candidate.id for s in dated] == [2, 1, 3]
