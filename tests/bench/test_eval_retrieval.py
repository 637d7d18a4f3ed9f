"""The hand-written retrieval set (`eval_retrieval`): its invariants, the aggregation, and end-to-end runs."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from apps.bench.evaluation.ask import Answer, Run, dataset_ask
from apps.bench.evaluation.data import DatasetError, Question, dataset_subset
from apps.bench.evaluation.handwritten import (
    ADVERSARIAL,
    DEFAULT_PATH,
    QUESTION_TYPES,
    handwritten_load,
    handwritten_parse,
    handwritten_problems,
)
from apps.bench.evaluation.load import dataset_write
from apps.bench.evaluation.report import report_lines, rows
from apps.experiments.recall import Scoring
from apps.layers.models import Item, Layer
from apps.workspaces.models import Workspace

# --- the shipped dataset ---------------------------------------------------------------------


def test_it_ships_a_dataset_without_problems() -> None:
    dataset = handwritten_load()
    assert handwritten_problems(dataset) == []
    assert 6 <= len(dataset.conversations) <= 10
    assert all(20 <= len(c.turns) <= 50 for c in dataset.conversations)
    assert sum(len(c.turns) for c in dataset.conversations) <= 400
    assert 60 <= len(dataset.questions) <= 100


def test_every_evidence_turn_exists_in_the_questions_own_conversation() -> None:
    dataset = handwritten_load()
    owner = {t.id: c.id for c in dataset.conversations for t in c.turns}
    for q in dataset.questions:
        assert all(owner[t] == q.conversation for t in (*q.evidence, *q.superseded)), q.id
        assert bool(q.evidence) == (q.category != ADVERSARIAL), q.id


def test_ids_are_unique_and_turns_move_forward_in_time() -> None:
    dataset = handwritten_load()
    turn_ids = [t.id for c in dataset.conversations for t in c.turns]
    assert len(turn_ids) == len(set(turn_ids))
    assert len({q.id for q in dataset.questions}) == len(dataset.questions)
    for c in dataset.conversations:
        assert c.turns, c.id
        stamps = [t.created_at for t in c.turns]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    for raw in json.loads(DEFAULT_PATH.read_text())["conversations"]:
        starts = [datetime.fromisoformat(s["started_at"]) for s in raw["sessions"]]
        assert starts == sorted(starts), raw["id"]
        assert all(
            s <= datetime.fromisoformat(x["turns"][0]["created_at"])
            for s, x in zip(starts, raw["sessions"], strict=True)
        )


def test_it_covers_every_question_type_and_updates_name_the_turn_they_replace() -> None:
    dataset = handwritten_load()
    assert {q.category for q in dataset.questions} == set(QUESTION_TYPES)
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
    problems = "\n".join(handwritten_problems(handwritten_parse(data)))
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
        handwritten_load(path=path)
    path.write_text("{not json")
    with pytest.raises(DatasetError, match="cannot read"):
        handwritten_load(path=path)


# --- aggregation -----------------------------------------------------------------------------


def answer(qid: str, category: str, budget: int, recall: float | None, tokens: int = 100, non_turn: int = 0) -> Answer:
    evidence = ("t",) if recall is not None else ()
    methods = {
        "service": recall,
        "fusion": recall,
        "bm25": recall,
        "dense": recall,
        "recency": None if recall is None else 0.0,
    }
    question = Question(id=qid, conversation="c", category=category, question="?", evidence=evidence)
    return Answer(question, budget, methods, tokens, False, 1 if non_turn else 0, non_turn, 1.0, False)


def test_rows_average_scored_questions_and_leave_those_without_evidence_out() -> None:
    dataset = replace(handwritten_load(), conversations=(), sha256="0" * 64)
    run = Run(
        dataset=dataset,
        scope="conversation",
        budgets=(500,),
        answers=(
            answer("q1", "single_hop", 500, 1.0),
            answer("q2", "multi_session", 500, 0.5),
            answer("q3", ADVERSARIAL, 500, None, tokens=400, non_turn=150),
        ),
        workspace_slug="x",
        load_seconds=0.0,
        run_seconds=0.0,
        warnings=(),
    )
    (row,) = rows(run)
    assert row.recall["service"] == 0.75 and row.complete["service"] == 0.5 and row.recall["recency"] == 0.0
    assert row.by_category["single_hop"]["service"] == 1.0 and row.by_category["multi_session"]["service"] == 0.5
    assert row.mean_tokens == 200 and row.over_budget == 0
    assert row.non_turn_chunks == 1 and row.non_turn_share == 150 / 600  # of every answer's tokens
    lines = report_lines(run)
    assert "2 scored questions (1 without evidence, asked and not scored)" in lines[0]
    assert lines[-1].startswith("summary: service 0.750@500 | fusion 0.750 | bm25 0.750 | dense 0.750 | recency 0.000")


# --- end to end ------------------------------------------------------------------------------

# Questions whose evidence sits in the first sessions, so a recency window cannot reach it.
EARLY_QUESTIONS = ("japan-q01", "japan-q02", "japan-q06", "dog-q01", "dog-q03", "dog-q08")


@pytest.mark.django_db
def test_the_runner_beats_the_recency_window_and_never_exceeds_a_budget(eval_cache: Path) -> None:
    dataset = dataset_subset(dataset=handwritten_load(), conversations=["japan", "dog"], questions=EARLY_QUESTIONS)
    assert {q.id for q in dataset.questions} == set(EARLY_QUESTIONS)
    loaded = dataset_write(dataset=dataset, progress=lambda _: None)
    assert set(loaded.layers) == {"japan", "dog"}

    run = dataset_ask(dataset=dataset, loaded=loaded, budgets=(500, 2000), progress=lambda _: None)

    assert len(run.answers) == 2 * len(EARLY_QUESTIONS)
    assert all(a.recall["service"] is not None and 0.0 <= a.recall["service"] <= 1.0 for a in run.answers)
    assert all(a.tokens <= a.budget and not a.over_budget for a in run.answers)
    (at_500, _) = rows(run)
    assert at_500.recall["service"] > at_500.recall["recency"] and at_500.recall["fusion"] > at_500.recall["recency"]
    assert len(list(eval_cache.glob("plain-*.npy"))) == 1  # the baselines' passage vectors, kept for a --reuse


@pytest.mark.django_db
def test_a_threaded_set_is_written_with_each_message_answering_the_one_before() -> None:
    dataset = dataset_subset(dataset=handwritten_load(), conversations=["dog"], questions=())
    loaded = dataset_write(dataset=dataset, progress=lambda _: None)
    items = list(Item.objects.filter(workspace=loaded.workspace, kind="message").order_by("created_at"))
    assert [i.external_id for i in items] == [t.id for t in dataset.turns]
    assert items[0].parent_id is None
    assert all(later.parent_id == earlier.pk for earlier, later in pairwise(items))
    session = Layer.objects.get(workspace=loaded.workspace, kind="session", external_id="dog-s1")
    assert session.name == "Adopting and raising a dog · 2024-04-02"  # the name the stored vectors carry
    assert dataset.scoring is Scoring.TEXT


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
def test_the_command_prints_the_table_and_deletes_its_workspace_unless_kept(tmp_path: Path, eval_cache: Path) -> None:
    path = tiny_dataset(tmp_path / "tiny.json")
    out = io.StringIO()
    call_command("eval_retrieval", "--dataset", str(path), "--budgets", "500,1000", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[2].split()[:4] == ["budget", "service", "fusion", "Δ"]
    assert [line.split()[0] for line in lines[3:5]] == ["500", "1000"]
    assert "single_hop(1)" in out.getvalue() and "1 without evidence" in lines[0]
    assert lines[-1].startswith("summary: service ")
    assert not Workspace.objects.filter(slug__startswith="eval-retrieval-").exists()

    out = io.StringIO()
    call_command("eval_retrieval", "--dataset", str(path), "--budgets", "500", "--keep", stdout=out)
    assert Workspace.objects.filter(slug__startswith="eval-retrieval-").count() == 1


def test_the_command_refuses_bad_budgets_datasets_and_workspaces(tmp_path: Path, db: None) -> None:
    with pytest.raises(CommandError, match="--budgets"):
        call_command("eval_retrieval", "--budgets", "500,lots")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("eval_retrieval", "--dataset", str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="no workspace"):
        call_command("eval_retrieval", "--reuse", "nope")
