"""`manage.py eval_locomo` on a tiny conversation in LoCoMo's format: parsing and evidence repair,
the baselines, and a real run (write path, embeddings, context_assemble) with --keep and --reuse."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from apps.bench.evaluation.baselines import TurnIndex
from apps.bench.evaluation.data import DatasetError
from apps.bench.evaluation.locomo import evidence_ids, locomo_load
from apps.experiments.recall import Scoring
from apps.layers.models import Item, Layer
from apps.workspaces.models import Workspace


def _turn(speaker: str, dia_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


SAMPLE = {
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Maya",
        "speaker_b": "Tom",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("Maya", "D1:1", "Hi Tom! I finally adopted a beagle from the Oakland shelter."),
            _turn("Tom", "D1:2", "Congrats! What did you name him?"),
            _turn("Maya", "D1:3", "His name is Biscuit, he is two years old.", blip_caption="a beagle on a sofa"),
        ],
        "session_2_date_time": "10:02 am on 20 June, 2023",
        "session_2": [
            _turn("Tom", "D2:1", "I started rock climbing at the gym downtown last week."),
            _turn("Maya", "D2:2", "Nice! Biscuit learned to sit and fetch."),
            _turn("Tom", "D2:3", "My sister visits from Lisbon next month."),
        ],
    },
    "qa": [
        {"question": "What is the name of Maya's dog?", "answer": "Biscuit", "evidence": ["D1:3"], "category": 4},
        {"question": "Where did Maya adopt her dog?", "answer": "Oakland", "evidence": ["D:1:01"], "category": 4},
        {"question": "What has Biscuit learned?", "answer": "sit", "evidence": ["D2:2; D1:3"], "category": 1},
        {"question": "What did Tom start?", "answer": "climbing", "evidence": ["D9:9"], "category": 2},
        {"question": "What is Tom's cat called?", "adversarial_answer": "none", "evidence": [], "category": 5},
    ],
}


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_it_reads_turns_as_the_readme_writes_them(locomo_file: Path) -> None:
    data = locomo_load(path=locomo_file)
    (sample,) = data.conversations
    turns = sample.turns
    assert [t.id for t in turns][:2] == ["conv-t:D1:1", "conv-t:D1:2"]
    assert turns[2].content == "Maya: His name is Biscuit, he is two years old. [shares image: a beagle on a sofa]"
    assert turns[2].rendered == f"[1:56 pm on 8 May, 2023] {turns[2].content}"
    assert turns[2].metadata == {"speaker": "Maya", "session": 1, "dia_id": "D1:3"}
    assert [t.role for t in turns[:2]] == ["user", "assistant"]
    assert turns[1].created_at.isoformat() == "2023-05-08T13:56:01+00:00"
    assert sample.sessions[1].id == sample.sessions[1].name == "conv-t/session_2"
    assert (data.model, data.format, data.scoring, data.threaded) == ("gpt-4", "text", Scoring.IDS, False)


def test_it_scores_only_categories_one_to_four_with_valid_evidence(locomo_file: Path) -> None:
    data = locomo_load(path=locomo_file)
    assert [q.question for q in data.questions] == [
        "What is the name of Maya's dog?",
        "Where did Maya adopt her dog?",
        "What has Biscuit learned?",
    ]
    assert data.skipped_questions == 2
    assert data.questions[1].evidence == ("conv-t:D1:1",)
    assert data.questions[2].evidence == ("conv-t:D1:3", "conv-t:D2:2")
    assert [q.category for q in data.questions] == ["single_hop", "single_hop", "multi_hop"]


def test_it_repairs_malformed_evidence_ids_and_drops_unknown_ones() -> None:
    known = {"D11:26", "D30:5", "D1:2"}
    assert evidence_ids(["D:11:26", "D30:05", "D1:2,D1:2", "D4:36"], known) == ["D11:26", "D1:2", "D30:5"]  # as strings


def test_it_says_clearly_when_the_file_is_not_locomo(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"qa": []}]))
    with pytest.raises(DatasetError, match="lacks a field"):
        locomo_load(path=path)
    with pytest.raises(CommandError, match="cannot read"):
        call_command("eval_locomo", "--path", str(tmp_path / "missing.json"))


def test_the_baselines_rank_by_words_and_by_vector(locomo_file: Path) -> None:
    (sample,) = locomo_load(path=locomo_file).conversations
    vectors = np.eye(len(sample.turns), 8, dtype=np.float32)
    index = TurnIndex(turns=sample.turns, vectors=vectors)
    assert index.bm25("Where is the Oakland shelter?")[0] == "conv-t:D1:1"
    assert index.bm25("quantum chromodynamics") == []
    assert index.dense(vectors[4])[0] == "conv-t:D2:2"
    fused = index.rankings(query="Biscuit", query_vector=vectors[4])["fusion"]
    assert fused[0] == "conv-t:D2:2"  # first by vector, second by keyword


@pytest.mark.django_db(transaction=True)
def test_it_loads_asks_and_reports_with_same_run_baselines(locomo_file: Path, eval_cache: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    # The service's default deadline would cut every answer short; the eval asks with its own.
    with override_settings(ASSEMBLY_TIMEOUT_MS=1):
        call_command("eval_locomo", "--path", str(locomo_file), "--budgets", "60,500", "--json", stdout=out, stderr=err)
    report = json.loads(out.getvalue())
    assert report["timeout_ms"] == 10_000
    assert [b["partial"] for b in report["budgets"]] == [0, 0]
    assert report["dataset"] == {
        "name": "locomo",
        "sha256": report["dataset"]["sha256"],
        "conversations": 1,
        "turns": 6,
        "questions": 3,
        "unscored_questions": 0,
    }
    small, large = report["budgets"]
    assert small["budget"] == 60 and large["budget"] == 500
    assert large["recall"]["service"] == 1.0 and large["recall"]["fusion"] == 1.0  # the whole conversation fits
    assert small["recall"]["fusion"] < 1.0  # 60 tokens hold a turn or two
    assert small["over_budget"] == large["over_budget"] == 0
    assert set(large["by_category"]) == {"multi_hop", "single_hop"}  # categories without questions are left out
    assert "embedding: 6/6 done" in err.getvalue()
    assert not Workspace.objects.filter(slug=report["workspace"]).exists()  # deleted without --keep


@pytest.mark.django_db(transaction=True)
def test_a_kept_workspace_is_reused_without_writing_again(locomo_file: Path, eval_cache: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("eval_locomo", "--path", str(locomo_file), "--budgets", "500", "--keep", stdout=out, stderr=err)
    slug = err.getvalue().split("--reuse ")[-1].strip(" )\n")
    items = Item.objects.filter(workspace__slug=slug).count()
    again = io.StringIO()
    call_command("eval_locomo", "--path", str(locomo_file), "--reuse", slug, "--limit", "1", stdout=again)
    assert items == 6
    assert Item.objects.filter(workspace__slug=slug).count() == 6
    assert Layer.objects.filter(workspace__slug=slug, kind="session").count() == 2
    assert "2 scored questions" not in again.getvalue() and "1 scored questions" in again.getvalue()
    assert "summary: service 1.000@500" in again.getvalue()
    assert len(list(eval_cache.glob("plain-*.npy"))) == 1  # the baselines' passage vectors, embedded once
    late = io.StringIO()
    call_command(
        "eval_locomo", "--path", str(locomo_file), "--reuse", slug, "--budgets", "500", "--timeout-ms", "1", "--json",
        stdout=late,
    )  # fmt: skip
    (budget,) = json.loads(late.getvalue())["budgets"]
    assert budget["partial"] == 3  # every answer passed a 1 ms deadline, and the report says so
    with pytest.raises(CommandError, match="--timeout-ms"):
        call_command("eval_locomo", "--path", str(locomo_file), "--timeout-ms", "-1")
    with pytest.raises(CommandError, match="no workspace"):
        call_command("eval_locomo", "--path", str(locomo_file), "--reuse", "nope")
