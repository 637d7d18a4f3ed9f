"""The hand-written retrieval set (`dataset.json`, `manage.py eval_retrieval`): eight multi-session
conversations and questions of seven kinds with the turns that answer them, plus adversarial ones
without evidence (asked, never scored).

Written threaded (each message answers the one before it, across sessions too) and at once (one
transaction: its summaries are made after every turn is in; written a session at a time, the
contexts hold more summary chunks, the recall the same), asked with the service's default model and
format, scored by the text rule (data.Scoring.TEXT). The baselines see
a turn as `"<role>: <text>"`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from apps.bench.evaluation.data import Conversation, Dataset, DatasetError, Question, Session, Turn
from apps.experiments.recall import Scoring

DEFAULT_PATH = Path(__file__).with_name("dataset.json")
ADVERSARIAL = "adversarial"
CATEGORIES = ("single_hop", "multi_turn", "multi_session", "temporal", "knowledge_update", "preference", "assistant")
QUESTION_TYPES = (*CATEGORIES, ADVERSARIAL)


def _turn(raw: dict[str, str]) -> Turn:
    return Turn(
        id=raw["id"],
        role=raw["role"],
        created_at=datetime.fromisoformat(raw["created_at"]),
        content=raw["text"],
        rendered=f"{raw['role']}: {raw['text']}",
    )


def _conversation(raw: dict[str, Any]) -> Conversation:
    sessions = tuple(
        Session(
            id=s["id"],
            name=f"{raw['title']} · {datetime.fromisoformat(s['started_at']):%Y-%m-%d}",
            turns=tuple(_turn(t) for t in s["turns"]),
        )
        for s in raw["sessions"]
    )
    return Conversation(id=raw["id"], name=raw["title"], sessions=sessions)


def _question(raw: dict[str, Any]) -> Question:
    return Question(
        id=raw["id"],
        conversation=raw["conversation"],
        category=raw["type"],
        question=raw["question"],
        answer=raw.get("answer", ""),
        evidence=tuple(raw.get("evidence", ())),
        superseded=tuple(raw.get("superseded", ())),
    )


def handwritten_parse(data: dict[str, Any], *, sha256: str = "") -> Dataset:
    """Build the set from the JSON object (no invariant checks)."""
    try:
        return Dataset(
            name="retrieval",
            title="the hand-written retrieval set",
            conversations=tuple(_conversation(c) for c in data["conversations"]),
            questions=tuple(_question(q) for q in data["questions"]),
            categories=CATEGORIES,
            scoring=Scoring.TEXT,
            threaded=True,
            written_at_once=True,
            sha256=sha256,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"malformed dataset: {exc!r}") from exc


def handwritten_problems(dataset: Dataset) -> list[str]:
    """Every breach of the set's invariant, as readable sentences (empty when well-formed)."""
    problems: list[str] = []
    owner: dict[str, str] = {}
    for conversation in dataset.conversations:
        turns = conversation.turns
        if not turns:
            problems.append(f"conversation {conversation.id} has no turns")
        for turn in turns:
            if turn.id in owner:
                problems.append(f"turn id {turn.id} repeats")
            owner[turn.id] = conversation.id
            if turn.role not in ("user", "assistant"):
                problems.append(f"turn {turn.id} has role {turn.role!r}")
            if not turn.content.strip():
                problems.append(f"turn {turn.id} is empty")
            if turn.created_at.tzinfo is None:
                problems.append(f"turn {turn.id} has a naive timestamp")
        for before, after in pairwise(turns):
            if after.created_at <= before.created_at:
                problems.append(f"turn {after.id} is not later than {before.id}")
    conversation_ids = [c.id for c in dataset.conversations]
    if len(set(conversation_ids)) != len(conversation_ids):
        problems.append("conversation ids repeat")
    seen: set[str] = set()
    for q in dataset.questions:
        if q.id in seen:
            problems.append(f"question id {q.id} repeats")
        seen.add(q.id)
        if q.category not in QUESTION_TYPES:
            problems.append(f"question {q.id} has unknown type {q.category!r}")
        if q.conversation not in conversation_ids:
            problems.append(f"question {q.id} names unknown conversation {q.conversation}")
        if (q.category == ADVERSARIAL) != (not q.evidence):
            problems.append(f"question {q.id}: only adversarial questions may lack evidence")
        for turn_id in (*q.evidence, *q.superseded):
            if owner.get(turn_id) != q.conversation:
                problems.append(f"question {q.id} cites {turn_id}, not a turn of {q.conversation}")
    return problems


def handwritten_load(*, path: Path = DEFAULT_PATH) -> Dataset:
    """Read and check the set; raises DatasetError listing the first problems found."""
    try:
        raw = Path(path).read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc}") from exc
    dataset = handwritten_parse(data, sha256=hashlib.sha256(raw).hexdigest())
    problems = handwritten_problems(dataset)
    if problems:
        raise DatasetError(f"{len(problems)} problem(s) in {path}: " + "; ".join(problems[:5]))
    return dataset
