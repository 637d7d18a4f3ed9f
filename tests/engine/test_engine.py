"""The pure engine: ranking order, packing, truncation, formats and the budget invariant."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.text import cut_to_fit, sentences
from apps.core.tokenizer import count_tokens
from apps.engine import Candidate, RankContext, assemble, rank
from apps.engine.format import day
from tests.engine.candidates import NOW, cand, o200k

CTX = RankContext(now=NOW)


def test_it_ranks_pinned_items_first_then_by_fused_relevance() -> None:
    items = [
        cand(1, "keyword only", keyword_rank=2, keyword_score=0.2),
        cand(2, "both", vector_rank=1, vector_similarity=0.9, keyword_rank=1, keyword_score=0.3),
        cand(3, "pinned but irrelevant", pinned=True),
        cand(4, "vector only", vector_rank=2, vector_similarity=0.8),
    ]
    ranked = rank(items, context=CTX)
    assert [s.candidate.id for s in ranked] == [3, 2, 1, 4] or [s.candidate.id for s in ranked] == [3, 2, 4, 1]
    assert ranked[0].parts["pinned"] == 1.0
    assert ranked[1].parts["vector_rank"] == 1.0 and ranked[1].parts["keyword_rank"] == 1.0


def test_it_prefers_recent_items_when_relevance_ties() -> None:
    old = cand(1, "old", vector_rank=1, created_at=NOW - timedelta(days=365))
    new = cand(2, "new", vector_rank=1, created_at=NOW)
    ranked = rank([old, new], context=CTX)
    assert [s.candidate.id for s in ranked] == [2, 1]
    assert ranked[0].parts["recency"] > ranked[1].parts["recency"]


def test_it_packs_whole_items_in_rank_order_within_the_budget() -> None:
    ranked = rank([cand(i, f"Fact number {i} is short.", vector_rank=i) for i in range(1, 6)], context=CTX)
    result = assemble(ranked, budget=30, fmt="text", count=o200k)
    assert result.total_tokens == o200k(result.context) <= 30
    assert [c.id for c in result.chunks] == [1, 2, 3][: len(result.chunks)]
    assert result.overflow_count == 5 - len(result.chunks)
    assert {e.id for e in result.trace} == {1, 2, 3, 4, 5}
    excluded = [e for e in result.trace if e.decision == "excluded"]
    assert all(e.reason == "over_budget" and e.tokens > 0 for e in excluded)


def test_it_cuts_the_item_that_does_not_fit_at_a_sentence_boundary() -> None:
    long_text = " ".join(f"Sentence number {i} says something useful." for i in range(1, 40))
    ranked = rank([cand(1, long_text, vector_rank=1)], context=CTX)
    result = assemble(ranked, budget=60, fmt="text", count=o200k)
    (chunk,) = result.chunks
    assert chunk.truncated and result.truncated_count == 1
    assert chunk.text.endswith("useful.") and long_text.startswith(chunk.text)
    assert result.total_tokens == o200k(result.context) <= 60
    assert result.trace[0].decision == "truncated"


def test_it_excludes_an_item_whose_first_sentence_does_not_fit() -> None:
    ranked = rank([cand(1, "word " * 200, vector_rank=1)], context=CTX)
    result = assemble(ranked, budget=20, fmt="markdown", count=o200k)
    assert result.chunks == () and result.context == "" and result.total_tokens == 0
    assert result.trace[0].reason == "over_budget"


def test_it_renders_json_chunks_with_id_type_source_and_relevance() -> None:
    ranked = rank([cand(7, "Backups are kept 35 days.", vector_rank=1, title="Backups")], context=CTX)
    result = assemble(ranked, budget=200, fmt="json", count=o200k)
    (obj,) = json.loads(result.context)
    assert obj["id"] == 7 and obj["type"] == "memory/fact" and obj["source"] == "session"
    assert 0 < obj["relevance"] <= 1 and obj["content"] == "Backups are kept 35 days."


def test_it_renders_markdown_with_headers() -> None:
    ranked = rank([cand(1, "Body.", vector_rank=1, title="A title")], context=CTX)
    result = assemble(ranked, budget=200, fmt="markdown", count=o200k)
    assert result.context.startswith("# Context\n\n### A title · memory/fact · 2026-11-01 · session\nBody.")


def test_it_records_duplicates_in_the_trace() -> None:
    c = cand(1, "Same.", vector_rank=1)
    ranked = rank([c, c], context=CTX)
    result = assemble(ranked, budget=100, fmt="text", count=o200k)
    assert len(result.chunks) == 1
    assert [e.reason for e in result.trace] == ["fits", "duplicate"]


def test_it_splits_sentences_without_losing_text() -> None:
    text = "One. Two! Three?\n\nFour"
    assert "".join(sentences(text)) == text
    assert cut_to_fit(text, lambda t: len(t) <= 10) == "One. Two!"
    assert cut_to_fit("No boundary here", lambda t: False) is None


words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=300)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    contents=st.lists(words, min_size=0, max_size=12),
    titles=st.lists(st.text(max_size=20), min_size=12, max_size=12),
    pinned=st.lists(st.booleans(), min_size=12, max_size=12),
    budget=st.integers(min_value=1, max_value=400),
    fmt=st.sampled_from(["json", "markdown", "text"]),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_it_never_exceeds_the_token_budget(
    contents: list[str], titles: list[str], pinned: list[bool], budget: int, fmt: str, encoding: str
) -> None:
    def count(text: str) -> int:
        return count_tokens(text, encoding)

    items = [cand(i, text, title=titles[i], pinned=pinned[i], vector_rank=i + 1) for i, text in enumerate(contents)]
    result = assemble(rank(items, context=CTX), budget=budget, fmt=fmt, count=count)
    assert result.total_tokens == count(result.context)
    assert result.total_tokens <= budget
    assert len(result.trace) == len(items)


def test_it_cuts_only_one_item() -> None:
    long_a = " ".join(f"Alpha sentence {i} is here." for i in range(40))
    long_b = " ".join(f"Beta sentence {i} is here." for i in range(40))
    items = [cand(1, long_a, vector_rank=1), cand(2, long_b, vector_rank=2)]
    result = assemble(rank(items, context=CTX), budget=80, fmt="text", count=o200k)
    assert [c.id for c in result.chunks] == [1] and result.truncated_count == 1
    assert [(e.decision, e.reason) for e in result.trace][1] == ("excluded", "over_budget")


def test_hits_in_the_conversation_the_search_points_at_outrank_equal_hits_elsewhere() -> None:
    # layers 10, 11, 12 belong to conversation 100; layer 20 to conversation 200
    items = [
        cand(1, "renovation beam cost", layer_id=10, vector_rank=1, vector_similarity=0.9),
        cand(2, "renovation panel cost", layer_id=11, vector_rank=2, vector_similarity=0.88),
        cand(3, "moving costs money", layer_id=20, vector_rank=3, vector_similarity=0.87),
        cand(4, "wiring cost", layer_id=12, vector_rank=4, vector_similarity=0.86),
        cand(5, "company policy", layer_id=1, vector_rank=5, vector_similarity=0.85),
    ]
    # one hit per layer, so the layers' own focus (engine/fusion.py layer_focus) keeps the search order
    threads = {10: 100, 11: 100, 12: 100, 20: 200}
    plain = [s.candidate.id for s in rank(items, context=CTX)]
    focused = rank(items, context=RankContext(now=NOW, threads=threads))
    assert plain == [1, 2, 3, 4, 5]
    # the other conversation's hit falls behind; an item outside every conversation is neither helped nor hurt
    assert [s.candidate.id for s in focused] == [1, 2, 4, 5, 3]
    assert focused[0].parts["focus"] == 1.0 and 0 < focused[4].parts["focus"] < 1
    assert "focus" not in focused[3].parts


def test_hits_from_one_conversation_get_no_focus_part() -> None:
    items = [cand(i, f"turn {i}", layer_id=10, vector_rank=i, vector_similarity=0.9 - i / 100) for i in range(1, 4)]
    ranked = rank(items, context=RankContext(now=NOW, threads={10: 100}))
    assert all("focus" not in s.parts for s in ranked)


DAY_1 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
DAY_2 = datetime(2023, 6, 2, 9, 0, tzinfo=UTC)


def turn(id: int, content: str, at: datetime, role: str = "user", **kw: object) -> Candidate:
    return cand(id, content, kind="message", type="", role=role, created_at=at, **kw)


def test_text_turns_of_one_day_share_one_date_line_in_the_order_they_were_said() -> None:
    items = [
        turn(1, "Caroline: I joined the choir.", DAY_1 + timedelta(seconds=2), vector_rank=1),
        cand(2, "Choir practice is on Tuesdays.", vector_rank=2, created_at=DAY_1),
        turn(3, "Mel: Since May?", DAY_2, role="assistant", vector_rank=3),
        turn(4, "Mel: What did you do today?", DAY_1 + timedelta(seconds=1), role="assistant", vector_rank=4),
    ]
    result = assemble(rank(items, context=CTX), budget=500, fmt="text", count=o200k)
    assert [c.id for c in result.chunks] == [1, 2, 3, 4]  # the chunks keep their rank order
    assert result.context == (
        "[2023-05-08]\n[assistant] Mel: What did you do today?\n[user] Caroline: I joined the choir.\n\n"
        "[memory/fact 2023-05-08] Choir practice is on Tuesdays.\n\n"
        "[2023-06-02]\n[assistant] Mel: Since May?"
    )
    assert result.total_tokens == o200k(result.context)
    # a turn rendered alone still says its day; json and markdown keep one header per chunk
    assert assemble(rank(items[:1], context=CTX), budget=500, fmt="text", count=o200k).context == (
        "[2023-05-08]\n[user] Caroline: I joined the choir."
    )
    assert assemble(rank(items, context=CTX), budget=500, fmt="markdown", count=o200k).context.count("2023-05-08") == 3


def test_the_date_line_is_paid_once_so_a_budget_holds_more_turns() -> None:
    items = [
        turn(i, f"Speaker: sentence number {i} about the trip.", DAY_1 + timedelta(seconds=i), vector_rank=i)
        for i in range(1, 31)
    ]
    ranked = rank(items, context=CTX)
    budget = 150
    grouped = assemble(ranked, budget=budget, fmt="text", count=o200k)
    # what each turn cost with its own date, as it did before turns were grouped by day
    each = o200k("[user 2023-05-08] Speaker: sentence number 10 about the trip.") + o200k("\n\n")
    alone = budget // each
    assert grouped.context.count("[2023-05-08]") == 1
    assert len(grouped.chunks) > alone + 3
    assert grouped.total_tokens == o200k(grouped.context) <= budget


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(["turn", "memory"]), min_size=1, max_size=14),
    days=st.lists(st.integers(0, 3), min_size=14, max_size=14),
    contents=st.lists(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120),
        min_size=14,
        max_size=14,
    ),
    budget=st.integers(min_value=1, max_value=400),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_turns_grouped_by_day_never_exceed_the_token_budget(
    kinds: list[str], days: list[int], contents: list[str], budget: int, encoding: str
) -> None:
    def count(text: str) -> int:
        return count_tokens(text, encoding)

    items = [
        turn(i, contents[i], DAY_1 + timedelta(days=days[i], seconds=i), vector_rank=i + 1)
        if kind == "turn"
        else cand(i, contents[i], vector_rank=i + 1)
        for i, kind in enumerate(kinds)
    ]
    result = assemble(rank(items, context=CTX), budget=budget, fmt="text", count=count)
    assert result.total_tokens == count(result.context) <= budget
    assert len(result.trace) == len(items)
    taken_days = {c.created_at.date() for c in result.chunks if c.kind == "message"}
    for d in taken_days:
        assert result.context.count(f"[{d.isoformat()}]\n") >= 1
    for c in result.chunks:
        assert c.text in result.context


@settings(max_examples=300, deadline=None)
@given(at=st.datetimes(timezones=st.timezones()))
def test_a_turns_day_reads_like_strftime(at: datetime) -> None:
    assert day(cand(1, "hi", created_at=at)) == at.strftime("%Y-%m-%d")
