"""The evaluation harness both sets share: the two recall rules and the baselines (packing, recency,
fusion, BM25, dense)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from apps.bench.evaluation.baselines import Packer, TurnIndex, rrf_fuse
from apps.bench.evaluation.data import Turn
from apps.experiments.recall import ChunkView, Scoring, evidence_missed, question_recall, turn_found, word_coverage

ANSWER = "Biscuit is a two-year-old beagle mix from the Oakland shelter. We pick him up on Saturday."


def words(text: str) -> int:
    """A stand-in token counter for the pure tests: one token per word."""
    return len(text.split())


def turn(turn_id: str, content: str, minute: int = 0) -> Turn:
    created = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=minute)
    return Turn(id=turn_id, role="user", created_at=created, content=content, rendered=f"user: {content}")


# --- the recall rules --------------------------------------------------------------------------


def test_a_whole_chunk_with_the_turns_id_finds_it() -> None:
    assert turn_found(turn_id="t1", turn_text=ANSWER, chunks=[ChunkView("t1", ANSWER)])
    assert not turn_found(turn_id="t1", turn_text=ANSWER, chunks=[ChunkView("t2", "something else")])


def test_a_truncated_chunk_counts_only_while_most_of_the_turn_is_left() -> None:
    most = "Biscuit is a two-year-old beagle mix from the Oakland shelter. We pick him up on"
    first_sentence = "Biscuit is a two-year-old beagle mix."
    assert word_coverage(evidence_text=ANSWER, chunk_text=most) >= 0.75
    assert turn_found(turn_id="t1", turn_text=ANSWER, chunks=[ChunkView("t1", most, truncated=True)])
    assert not turn_found(turn_id="t1", turn_text=ANSWER, chunks=[ChunkView("t1", first_sentence, truncated=True)])


def test_another_chunk_finds_the_turn_only_by_containing_it_verbatim() -> None:
    merged = ChunkView("summary", f"Earlier:\n{ANSWER.replace(' ', '  ')}\nThen we talked about food.")
    reworded = ChunkView("summary", "We pick up Biscuit, a beagle mix aged two from the Oakland shelter, on Saturday.")
    assert turn_found(turn_id="t1", turn_text=ANSWER, chunks=[merged])
    assert not turn_found(turn_id="t1", turn_text=ANSWER, chunks=[reworded])


def test_the_id_rule_counts_any_chunk_with_the_id_and_nothing_else() -> None:
    cut = ChunkView("t1", "Biscuit is", truncated=True)
    quoted = ChunkView("summary", ANSWER)
    assert evidence_missed(scoring=Scoring.IDS, evidence={"t1": ANSWER}, chunks=[cut]) == ()
    assert evidence_missed(scoring=Scoring.IDS, evidence={"t1": ANSWER}, chunks=[quoted]) == ("t1",)
    assert evidence_missed(scoring=Scoring.TEXT, evidence={"t1": ANSWER}, chunks=[cut]) == ("t1",)
    assert evidence_missed(scoring=Scoring.TEXT, evidence={"t1": ANSWER}, chunks=[quoted]) == ()


def test_question_recall_is_the_share_found_zero_over_budget_and_none_without_evidence() -> None:
    evidence = {"t1": ANSWER, "t2": "Dr. Nakamura is his vet."}
    for scoring in Scoring:
        assert question_recall(scoring=scoring, evidence=evidence, chunks=[ChunkView("t1", ANSWER)]) == 0.5
        assert question_recall(scoring=scoring, evidence=evidence, chunks=[]) == 0.0
        assert question_recall(scoring=scoring, evidence={}, chunks=[ChunkView("t1", ANSWER)]) is None
        everything = [ChunkView("t1", ANSWER), ChunkView("t2", evidence["t2"])]
        assert question_recall(scoring=scoring, evidence=evidence, chunks=everything, over_budget=True) == 0.0


# --- the baselines -----------------------------------------------------------------------------


def test_the_recency_window_takes_the_newest_turns_that_fit_and_stops_at_the_first_that_does_not() -> None:
    turns = [turn(f"t{i}", "turn has five words" + " more" * (i == 8) * 20, minute=i) for i in range(10)]
    packer = Packer(turns=turns, count=words)  # "user: turn has five words" is 5 words
    assert packer.recent(20) == ["t9"]  # t8 does not fit: the window stops there
    assert words("\n\n".join(packer.text[t] for t in packer.recent(20))) <= 20
    assert Packer(turns=turns[:3], count=words).recent(3) == []


def test_packing_in_order_skips_what_does_not_fit_and_keeps_going() -> None:
    packer = Packer(turns=[turn("a", "one two"), turn("big", "w " * 50), turn("b", "four")], count=words)
    assert packer.pack(["a", "big", "b"], 6) == ["a", "b"]


def test_rrf_puts_what_both_rankings_like_first() -> None:
    assert rrf_fuse([["a", "b", "c"], ["b", "d"]])[0] == "b"
    assert set(rrf_fuse([["a"], ["d"]])) == {"a", "d"}


def test_bm25_ranks_by_shared_terms_and_ignores_stopwords() -> None:
    turns = [turn("vet", "Dr. Nakamura is the vet at Rockridge."), turn("walk", "Marisol walks him on Tuesdays.")]
    index = TurnIndex(turns=[*turns, turn("x", "the a is")], vectors=np.eye(3, 4, dtype=np.float32))
    assert index.bm25("Who is the vet?") == ["vet"]
    assert index.bm25("the is") == []


def test_dense_orders_by_angle_not_length() -> None:
    vectors = np.array([[10.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    index = TurnIndex(turns=[turn("near", "beagle"), turn("far", "vet")], vectors=vectors)
    assert index.dense(np.array([1.0, 0.0])) == ["near", "far"]
