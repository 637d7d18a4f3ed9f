"""An evaluation set as frozen dataclasses, whichever file it came from (`handwritten.py`, `locomo.py`).

A set is conversations in sessions of turns, and questions asked after the whole conversation with
the turns that answer them (`evidence`, external ids). How the set is written and asked travels with
it: whether each message answers the one before it (`threaded`: the loader links `parent`), whether
it is written in one transaction rather than a session at a time (`written_at_once`), the request's
model and format, and how an answer is scored (`Scoring`, the experiments' recall rule: the pages'
experiments score the same way, apps/experiments/recall.py).

Invariant a caller may rely on: turn ids are unique in the set, every evidence id names a turn of
the question's own conversation, and turns are in time order within a conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from apps.experiments.recall import Scoring


class DatasetError(ValueError):
    """The file is unreadable, or not a set of this kind, or breaks the invariant above."""


@dataclass(frozen=True)
class Turn:
    """One message; `id` becomes the item's external id and `content` its content. `rendered` is the
    turn as the baselines pack it (each set says how a plain retriever would show it)."""

    id: str
    role: str  # "user" | "assistant"
    created_at: datetime
    content: str
    rendered: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    """One sitting: a `session` layer (`id` its external id, `name` its name)."""

    id: str
    name: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    """One conversation: a `multi_session` layer (`id` its external id, `name` its name) over its sessions."""

    id: str
    name: str
    sessions: tuple[Session, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for session in self.sessions for turn in session.turns)


@dataclass(frozen=True)
class Question:
    """A question and the turns that answer it (`evidence`; none: asked, never scored). `superseded`
    turns hold an older value a later turn replaced (documentation, not evidence)."""

    id: str
    conversation: str
    category: str
    question: str
    evidence: tuple[str, ...]
    answer: str = ""
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A set and how it is asked: `model` and `format` of every request (None: the service's default)."""

    name: str  # "retrieval" | "locomo": the workspace's slug starts with "eval-<name>-"
    title: str
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]
    categories: tuple[str, ...]  # the scored categories, in report order
    scoring: Scoring
    threaded: bool = False
    written_at_once: bool = False  # in one transaction, so the change triggers fire once, after every turn
    model: str | None = None
    format: str | None = None
    skipped_questions: int = 0  # in the file but not in the set (LoCoMo: category 5, no valid evidence)
    sha256: str = ""

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for conversation in self.conversations for turn in conversation.turns)

    def turn_index(self) -> dict[str, Turn]:
        return {turn.id: turn for turn in self.turns}


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
