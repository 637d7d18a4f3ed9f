"""LoCoMo samples as frozen dataclasses: turns with their session dates, and the scored questions.

Follows the development set's README: a turn's content is `"<speaker>: <text>"` plus
`" [shares image: <caption>]"`, its external id `"<sample_id>:<dia_id>"`; sessions are dated by
`session_<n>_date_time` (`"1:56 pm on 8 May, 2023"`, UTC), one second per turn; questions of
categories 1-4 with at least one valid evidence turn are scored, with malformed evidence ids
repaired (`D:11:26` → `D11:26`, `D30:05` → `D30:5`) and ids that name no turn dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


class LocomoError(ValueError):
    """The file is not a LoCoMo sample list this command can read."""


@dataclass(frozen=True)
class Turn:
    """One turn; `external_id` is the item's external id, `content` the item's content."""

    external_id: str
    dia_id: str
    session: int
    speaker: str
    role: str  # "user" for speaker_a, "assistant" for speaker_b
    content: str
    created_at: datetime
    date_text: str  # the session's date as the data writes it, for the baselines' rendering


@dataclass(frozen=True)
class Session:
    number: int
    external_id: str
    date_text: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Sample:
    """One conversation between two speakers, in sessions."""

    id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(t for s in self.sessions for t in s.turns)


@dataclass(frozen=True)
class Question:
    """A scored question: its sample, LoCoMo category and evidence turns (external ids)."""

    id: str
    sample: str
    category: int
    question: str
    evidence: frozenset[str]

    @property
    def category_name(self) -> str:
        return CATEGORIES[self.category]


@dataclass(frozen=True)
class LocomoSet:
    samples: tuple[Sample, ...]
    questions: tuple[Question, ...]
    skipped_questions: int  # category 5, or no valid evidence
    sha256: str

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.samples)


def _session(sample_id: str, number: int, conversation: dict[str, Any], a: str) -> Session:
    date_text = str(conversation.get(f"session_{number}_date_time", ""))
    try:
        started = datetime.strptime(date_text, DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise LocomoError(f"{sample_id} session {number}: unreadable date {date_text!r}") from exc
    turns = []
    for index, raw in enumerate(conversation[f"session_{number}"]):
        content = f"{raw['speaker']}: {raw['text']}"
        if raw.get("blip_caption"):
            content += f" [shares image: {raw['blip_caption']}]"
        turns.append(
            Turn(
                external_id=f"{sample_id}:{raw['dia_id']}",
                dia_id=str(raw["dia_id"]),
                session=number,
                speaker=str(raw["speaker"]),
                role="user" if raw["speaker"] == a else "assistant",
                content=content,
                created_at=started + timedelta(seconds=index),
                date_text=date_text,
            )
        )
    return Session(number=number, external_id=f"{sample_id}/session_{number}", date_text=date_text, turns=tuple(turns))


def evidence_ids(raw: list[Any], turn_ids: set[str]) -> frozenset[str]:
    """The valid dia ids among raw evidence strings, repaired as the README says."""
    found = set()
    for entry in raw:
        for part in _EVIDENCE_SPLIT.split(str(entry)):
            match = _EVIDENCE_ID.fullmatch(part)
            dia_id = f"D{int(match[1])}:{int(match[2])}" if match else part
            if dia_id in turn_ids:
                found.add(dia_id)
    return frozenset(found)


def _sample(raw: dict[str, Any]) -> tuple[Sample, list[Question], int]:
    sample_id = str(raw["sample_id"])
    conversation = raw["conversation"]
    a, b = str(conversation["speaker_a"]), str(conversation["speaker_b"])
    numbers = sorted(int(m[1]) for key in conversation if (m := _SESSION_KEY.fullmatch(key)) and conversation[key])
    sample = Sample(
        id=sample_id, speaker_a=a, speaker_b=b, sessions=tuple(_session(sample_id, n, conversation, a) for n in numbers)
    )
    dia_ids = {t.dia_id for t in sample.turns}
    questions, skipped = [], 0
    for index, qa in enumerate(raw.get("qa", [])):
        category = int(qa.get("category", 0))
        evidence = evidence_ids(qa.get("evidence") or [], dia_ids)
        if category not in CATEGORIES or not evidence:
            skipped += 1
            continue
        questions.append(
            Question(
                id=f"{sample_id}#{index}",
                sample=sample_id,
                category=category,
                question=str(qa["question"]),
                evidence=frozenset(f"{sample_id}:{d}" for d in evidence),
            )
        )
    return sample, questions, skipped


def locomo_load(*, path: Path) -> LocomoSet:
    """Read and check a LoCoMo file (a list of samples with `conversation` and `qa`)."""
    try:
        data = path.read_bytes()
        raw = json.loads(data)
    except (OSError, ValueError) as exc:
        raise LocomoError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, list) or not raw:
        raise LocomoError(f"{path}: expected a non-empty list of samples")
    samples, questions, skipped = [], [], 0
    try:
        for entry in raw:
            sample, asked, left = _sample(entry)
            samples.append(sample)
            questions += asked
            skipped += left
    except (KeyError, TypeError) as exc:
        raise LocomoError(f"{path}: a sample lacks a field LoCoMo has ({exc})") from exc
    if len({s.id for s in samples}) != len(samples):
        raise LocomoError(f"{path}: sample ids repeat")
    return LocomoSet(
        samples=tuple(samples),
        questions=tuple(questions),
        skipped_questions=skipped,
        sha256=hashlib.sha256(data).hexdigest(),
    )
