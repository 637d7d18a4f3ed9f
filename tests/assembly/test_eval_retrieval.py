"""The retrieval-quality set, the recall rule, the baselines, and an end-to-end run of the runner."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from apps.assembly.evaluation.baselines import (
    bm25_ranking,
    cosine_ranking,
    pack_in_order,
    recency_window,
    rrf_fuse,
)
from apps.assembly.evaluation.dataset import (
    ADVERSARIAL,
    QUESTION_TYPES,
    DatasetError,
    Turn,
    dataset_load,
    dataset_parse,
    dataset_problems,
    dataset_subset,
)
from apps.assembly.evaluation.recall import ChunkView, question_recall, turn_found, word_coverage
from apps.assembly.evaluation.report import budget_rows, report_lines
from apps.assembly.evaluation.runner import EvalRun, QuestionResult, eval_load, eval_questions
from apps.workspaces.models import Workspace

ANSWER = "Biscuit is a two-year-old beagle mix from the Oakland shelter. We pick him up on Saturday."


def words(text: str) -> int:
    """A stand-in token counter for the pure tests: one token per word."""
    return len(text.split())


# --- the shipped dataset ---------------------------------------------------------------------


def test_it_ships_a_dataset_without_problems() -> None:
    dataset = dataset_load()
    assert dataset_problems(dataset) == []
    assert 6 <= len(dataset.conversations) <= 10
    assert all(20 <= len(c.turns) <= 50 for c in dataset.conversations)
    assert sum(len(c.turns) for c in dataset.conversations) <= 400
    assert 60 <= len(dataset.questions) <= 100


def test_every_evidence_turn_exists_in_the_questions_own_conversation() -> None:
    dataset = dataset_load()
    owner = {t.id: c.id for c in dataset.conversations for t in c.turns}
    for q in dataset.questions:
        assert all(owner[t] == q.conversation for t in (*q.evidence, *q.superseded)), q.id
        assert bool(q.evidence) == (q.type != ADVERSARIAL), q.id


def test_ids_are_unique_and_turns_move_forward_in_time() -> None:
    dataset = dataset_load()
    turn_ids = [t.id for c in dataset.conversations for t in c.turns]
    assert len(turn_ids) == len(set(turn_ids))
    assert len({q.id for q in dataset.questions}) == len(dataset.questions)
    for c in dataset.conversations:
        assert c.turns, c.id
        stamps = [t.created_at for t in c.turns]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        assert [s.started_at for s in c.sessions] == sorted(s.started_at for s in c.sessions)


def test_it_covers_every_question_type_and_updates_name_the_turn_they_replace() -> None:
    dataset = dataset_load()
    assert {q.type for q in dataset.questions} == set(QUESTION_TYPES)
    turns = dataset.turn_index()
    for q in dataset.questions:
        for old in q.superseded:  # the replaced value comes before every evidence turn
            assert all(turns[old].created_at < turns[new].created_at for new in q.evidence), q.id


def raw_dataset(**changes: Any) -> dict[str, Any]:
    start = datetime(2024, 1, 1, 9, tzinfo=UTC)
    turns = [
        {"id": f"c-s1-t{i}", "role": "user", "created_at": (start + timedelta(minutes=i)).isoformat(), "text": f"t{i}"}
        for i in range(3)
    ]
    data = {
        "conversations": [
            {"id": "c", "title": "C", "sessions": [{"id": "c-s1", "started_at": start.isoformat(), "turns": turns}]}
        ],
        "questions": [
            {"id": "q1", "conversation": "c", "type": "single_hop", "question": "?", "evidence": ["c-s1-t1"]}
        ],
    }
    data.update(changes)
    return data


def test_it_finds_each_kind_of_problem_in_a_broken_dataset() -> None:
    data = raw_dataset()
    turns = data["conversations"][0]["sessions"][0]["turns"]
    turns[2]["created_at"] = turns[0]["created_at"]  # out of order
    turns.append(dict(turns[1]))  # repeated id
    data["conversations"].append({"id": "empty", "title": "E", "sessions": []})
    data["questions"] += [
        {"id": "q1", "conversation": "c", "type": "single_hop", "question": "?", "evidence": ["nope"]},
        {"id": "q2", "conversation": "c", "type": "temporal", "question": "?", "evidence": []},
        {"id": "q3", "conversation": "c", "type": "guess", "question": "?", "evidence": ["c-s1-t0"]},
    ]
    problems = "\n".join(dataset_problems(dataset_parse(data)))
    for expected in (
        "is not later than",
        "turn id c-s1-t1 repeats",
        "conversation empty has no turns",
        "question id q1 repeats",
        "cites nope",
        "only adversarial questions may lack evidence",
        "unknown type 'guess'",
    ):
        assert expected in problems


def test_it_refuses_to_load_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw_dataset(questions=[{"id": "q", "conversation": "x"}])))
    with pytest.raises(DatasetError, match="malformed"):
        dataset_load(path=path)
    path.write_text("{not json")
    with pytest.raises(DatasetError, match="cannot read"):
        dataset_load(path=path)


# --- the recall rule -------------------------------------------------------------------------


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


def test_question_recall_is_the_share_of_evidence_found_and_none_without_evidence() -> None:
    evidence = {"t1": ANSWER, "t2": "Dr. Nakamura is his vet."}
    assert question_recall(evidence=evidence, chunks=[ChunkView("t1", ANSWER)]) == 0.5
    assert question_recall(evidence=evidence, chunks=[]) == 0.0
    assert question_recall(evidence={}, chunks=[ChunkView("t1", ANSWER)]) is None


# --- the baselines ---------------------------------------------------------------------------


def make_turns(n: int) -> list[Turn]:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return [Turn(f"t{i}", "user", start + timedelta(minutes=i), f"turn {i} has five words") for i in range(n)]


def test_the_recency_window_takes_the_newest_turns_that_fit_and_stops_at_the_first_that_does_not() -> None:
    window = recency_window(turns=make_turns(10), budget=20, count=words)  # "user: ..." is 6 words
    assert [c.external_id for c in window] == ["t9", "t8", "t7"]
    assert words("\n\n".join(c.text for c in window)) <= 20
    assert recency_window(turns=make_turns(3), budget=3, count=words) == []


def test_packing_in_order_skips_what_does_not_fit_and_keeps_going() -> None:
    chunks = [ChunkView("a", "one two three"), ChunkView("big", "w " * 50), ChunkView("b", "four five")]
    assert [c.external_id for c in pack_in_order(chunks=chunks, budget=6, count=words)] == ["a", "b"]


def test_rrf_puts_what_both_rankings_like_first() -> None:
    assert rrf_fuse([["a", "b", "c"], ["b", "d"]])[0] == "b"
    assert set(rrf_fuse([["a"], ["d"]])) == {"a", "d"}


def test_bm25_ranks_by_shared_terms_and_ignores_stopwords() -> None:
    docs = {"vet": "Dr. Nakamura is the vet at Rockridge.", "walk": "Marisol walks him on Tuesdays.", "x": "the a is"}
    assert bm25_ranking(query="Who is the vet?", docs=docs) == ["vet"]
    assert bm25_ranking(query="the is", docs=docs) == []


def test_cosine_ranking_orders_by_angle_not_length() -> None:
    vectors = {"near": np.array([10.0, 1.0]), "far": np.array([0.0, 1.0])}
    assert cosine_ranking(query_vector=np.array([1.0, 0.0]), vectors=vectors) == ["near", "far"]


# --- aggregation -----------------------------------------------------------------------------


def result(qid: str, qtype: str, budget: int, recall: float | None, tokens: int = 100) -> QuestionResult:
    return QuestionResult(qid, qtype, budget, recall, 0.0 if recall is not None else None, recall, tokens, ())


def test_rows_average_answerable_questions_and_leave_adversarial_ones_out() -> None:
    run = EvalRun(
        budgets=(500,),
        scope="conversation",
        results=(
            result("q1", "single_hop", 500, 1.0),
            result("q2", "multi_session", 500, 0.5),
            result("q3", ADVERSARIAL, 500, None, tokens=400),
        ),
        conversations=1,
        turns=3,
        load_seconds=0.0,
        run_seconds=0.0,
        workspace_slug="x",
        warnings=(),
    )
    (row,) = budget_rows(run)
    assert row.recall == 0.75 and row.complete == 0.5 and row.recency == 0.0
    assert row.by_type["single_hop"] == 1.0 and row.by_type["multi_session"] == 0.5
    assert row.mean_tokens == 200 and row.over_budget == 0
    lines = report_lines(run)
    assert "2 answerable questions (1 adversarial" in lines[0]
    assert lines[-1].startswith("summary: recall 0.750@500")


# --- end to end ------------------------------------------------------------------------------

# Questions whose evidence sits in the first sessions, so a recency window cannot reach it.
EARLY_QUESTIONS = ("japan-q01", "japan-q02", "japan-q06", "dog-q01", "dog-q03", "dog-q08")


@pytest.mark.django_db
def test_the_runner_beats_the_recency_window_and_never_exceeds_a_budget() -> None:
    dataset = dataset_subset(dataset=dataset_load(), conversations=["japan", "dog"], questions=EARLY_QUESTIONS)
    assert {q.id for q in dataset.questions} == set(EARLY_QUESTIONS)
    loaded = eval_load(dataset=dataset)
    assert set(loaded.conversations) == {"japan", "dog"}

    results = eval_questions(dataset=dataset, loaded=loaded, budgets=(500, 2000))

    assert len(results) == 2 * len(EARLY_QUESTIONS)
    assert all(r.recall is not None and 0.0 <= r.recall <= 1.0 for r in results)
    assert all(r.tokens <= r.budget for r in results)
    at_500 = [r for r in results if r.budget == 500]
    engine = sum(r.recall or 0.0 for r in at_500) / len(at_500)
    recency = sum(r.recency or 0.0 for r in at_500) / len(at_500)
    fused = sum(r.fused or 0.0 for r in at_500) / len(at_500)
    assert engine > recency and fused > recency


def tiny_dataset(path: Path) -> Path:
    start = datetime(2024, 5, 1, 8, tzinfo=UTC)
    texts = [
        ("user", "Our cat Miso only eats the salmon pate from Blue Hill, nothing else."),
        ("assistant", "Good to know; I'll keep Miso's food in mind."),
        ("user", "Can you remind me to water the basil on the balcony?"),
        ("assistant", "Sure, I'll remind you about the basil."),
    ]
    turns = [
        {"id": f"cat-s1-t{i}", "role": r, "created_at": (start + timedelta(minutes=i)).isoformat(), "text": t}
        for i, (r, t) in enumerate(texts)
    ]
    session = {"id": "cat-s1", "started_at": start.isoformat(), "turns": turns}
    food = {"id": "q1", "conversation": "cat", "type": "single_hop", "question": "What food does Miso eat?"}
    vet = {"id": "q2", "conversation": "cat", "type": ADVERSARIAL, "question": "What is Miso's vet called?"}
    data = {
        "conversations": [{"id": "cat", "title": "Cat", "sessions": [session]}],
        "questions": [{**food, "evidence": ["cat-s1-t0"]}, {**vet, "evidence": []}],
    }
    path.write_text(json.dumps(data))
    return path


@pytest.mark.django_db
def test_the_command_prints_the_table_and_deletes_its_workspace_unless_kept(tmp_path: Path) -> None:
    path = tiny_dataset(tmp_path / "tiny.json")
    out = io.StringIO()
    call_command("eval_retrieval", "--dataset", str(path), "--budgets", "500,1000", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[1].split()[:3] == ["budget", "recall", "complete"]
    assert [line.split()[0] for line in lines[2:4]] == ["500", "1000"]
    assert lines[-1].startswith("summary: recall ")
    assert not Workspace.objects.filter(slug__startswith="eval-retrieval-").exists()

    out = io.StringIO()
    call_command("eval_retrieval", "--dataset", str(path), "--budgets", "500", "--keep", stdout=out)
    assert Workspace.objects.filter(slug__startswith="eval-retrieval-").count() == 1


def test_the_command_refuses_bad_budgets_and_datasets(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--budgets"):
        call_command("eval_retrieval", "--budgets", "500,lots")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("eval_retrieval", "--dataset", str(tmp_path / "missing.json"))
