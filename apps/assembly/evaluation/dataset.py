"""The retrieval set as frozen dataclasses: loading, checking and sub-setting.

Invariant a caller may rely on after `dataset_load`: turn and question ids are unique, every
evidence and superseded id names a turn of the question's own conversation, and turns are in
strictly increasing time order within a conversation (`dataset_problems` lists any breach).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path(__file__).with_name("dataset.json")
ADVERSARIAL = "adversarial"
QUESTION_TYPES = (
    "single_hop",
    "multi_turn",
    "multi_session",
    "temporal",
    "knowledge_update",
    "preference",
    "assistant",
    ADVERSARIAL,
)


class DatasetError(ValueError):
    """The dataset file is unreadable or breaks one of the invariants above."""


@dataclass(frozen=True)
class Turn:
    """One message of a conversation; `id` becomes the item's external id."""

    id: str
    role: str
    created_at: datetime
    text: str


@dataclass(frozen=True)
class Session:
    id: str
    started_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str
    sessions: tuple[Session, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for session in self.sessions for turn in session.turns)


@dataclass(frozen=True)
class Question:
    """A question asked after the whole conversation; `evidence` are the turns that answer it.

    `superseded` turns state an older value that a later turn replaced (knowledge updates); they
    are documentation, not evidence. Adversarial questions have no evidence.
    """

    id: str
    conversation: str
    type: str
    question: str
    answer: str
    evidence: tuple[str, ...]
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dataset:
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]

    def turn_index(self) -> dict[str, Turn]:
        return {turn.id: turn for conversation in self.conversations for turn in conversation.turns}


def _turn(raw: dict[str, str]) -> Turn:
    return Turn(id=raw["id"], role=raw["role"], created_at=datetime.fromisoformat(raw["created_at"]), text=raw["text"])


def _conversation(raw: dict[str, Any]) -> Conversation:
    sessions = tuple(
        Session(
            id=s["id"],
            started_at=datetime.fromisoformat(s["started_at"]),
            turns=tuple(_turn(t) for t in s["turns"]),
        )
        for s in raw["sessions"]
    )
    return Conversation(id=raw["id"], title=raw["title"], sessions=sessions)


def _question(raw: dict[str, Any]) -> Question:
    return Question(
        id=raw["id"],
        conversation=raw["conversation"],
        type=raw["type"],
        question=raw["question"],
        answer=raw.get("answer", ""),
        evidence=tuple(raw.get("evidence", ())),
        superseded=tuple(raw.get("superseded", ())),
    )


def dataset_parse(data: dict[str, Any]) -> Dataset:
    """Build the dataclasses from the JSON object (no invariant checks)."""
    try:
        return Dataset(
            conversations=tuple(_conversation(c) for c in data["conversations"]),
            questions=tuple(_question(q) for q in data["questions"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"malformed dataset: {exc!r}") from exc


def dataset_problems(dataset: Dataset) -> list[str]:
    """Every breach of the module invariant, as readable sentences (empty when well-formed)."""
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
            if not turn.text.strip():
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
        if q.type not in QUESTION_TYPES:
            problems.append(f"question {q.id} has unknown type {q.type!r}")
        if q.conversation not in conversation_ids:
            problems.append(f"question {q.id} names unknown conversation {q.conversation}")
        if (q.type == ADVERSARIAL) != (not q.evidence):
            problems.append(f"question {q.id}: only adversarial questions may lack evidence")
        for turn_id in (*q.evidence, *q.superseded):
            if owner.get(turn_id) != q.conversation:
                problems.append(f"question {q.id} cites {turn_id}, not a turn of {q.conversation}")
    return problems


def dataset_load(*, path: Path = DEFAULT_PATH) -> Dataset:
    """Read and check the dataset; raises DatasetError listing the first problems found."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read dataset {path}: {exc}") from exc
    dataset = dataset_parse(data)
    problems = dataset_problems(dataset)
    if problems:
        raise DatasetError(f"{len(problems)} problem(s) in {path}: " + "; ".join(problems[:5]))
    return dataset


def dataset_subset(
    *, dataset: Dataset, conversations: Iterable[str], questions: Iterable[str] | None = None
) -> Dataset:
    """The named conversations with their questions (all of them, or only the named ones)."""
    keep = set(conversations)
    wanted = set(questions) if questions is not None else None
    return replace(
        dataset,
        conversations=tuple(c for c in dataset.conversations if c.id in keep),
        questions=tuple(q for q in dataset.questions if q.conversation in keep and (wanted is None or q.id in wanted)),
    )
