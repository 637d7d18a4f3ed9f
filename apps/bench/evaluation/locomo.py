"""The LoCoMo development set (`manage.py eval_locomo`): public long conversations, read from
`../shared/locomo-dev/` at run time and never copied into the repository.

Follows the set's README: one conversation per sample (external id `sample_id`), one session per
`session_<n>` (external id `<sample_id>/session_<n>`, dated by `session_<n>_date_time`,
`"1:56 pm on 8 May, 2023"`, UTC, one second per turn); a turn's content is `"<speaker>: <text>"`
plus `" [shares image: <caption>]"`, its external id `"<sample_id>:<dia_id>"`, role `user` for
speaker_a; questions of categories 1-4 with at least one valid evidence turn are scored, malformed
evidence ids repaired (`D:11:26` → `D11:26`, `D30:05` → `D30:5`) and ids that name no turn dropped.
Written unthreaded, each session in one bulk write; asked with `gpt-4` in `text`; scored by ids
(data.Scoring.IDS). The baselines see a turn as `"[<session date>] <content>"`.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

from apps.bench.evaluation.data import Conversation, Dataset, DatasetError, Question, Session, Turn
from apps.experiments.recall import Scoring

# shared/ beside the checkout (a worktree under wt/ finds it one level further up).
_CANDIDATES = [Path(settings.BASE_DIR).parents[n] / "shared" / "locomo-dev" / "locomo_dev.json" for n in (0, 1)]
DEFAULT_PATH = next((path for path in _CANDIDATES if path.exists()), _CANDIDATES[0])
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
MODEL = "gpt-4"
FORMAT = "text"
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


def _session(sample_id: str, number: int, conversation: dict[str, Any], a: str) -> Session:
    date_text = str(conversation.get(f"session_{number}_date_time", ""))
    try:
        started = datetime.strptime(date_text, DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise DatasetError(f"{sample_id} session {number}: unreadable date {date_text!r}") from exc
    turns = []
    for index, raw in enumerate(conversation[f"session_{number}"]):
        content = f"{raw['speaker']}: {raw['text']}"
        if raw.get("blip_caption"):
            content += f" [shares image: {raw['blip_caption']}]"
        turns.append(
            Turn(
                id=f"{sample_id}:{raw['dia_id']}",
                role="user" if raw["speaker"] == a else "assistant",
                created_at=started + timedelta(seconds=index),
                content=content,
                rendered=f"[{date_text}] {content}",
                metadata={"speaker": str(raw["speaker"]), "session": number, "dia_id": str(raw["dia_id"])},
            )
        )
    external_id = f"{sample_id}/session_{number}"
    return Session(id=external_id, name=external_id, turns=tuple(turns))


def evidence_ids(raw: list[Any], turn_ids: set[str]) -> list[str]:
    """The valid dia ids among raw evidence strings, repaired as the README says (sorted, once each)."""
    found = set()
    for entry in raw:
        for part in _EVIDENCE_SPLIT.split(str(entry)):
            match = _EVIDENCE_ID.fullmatch(part)
            dia_id = f"D{int(match[1])}:{int(match[2])}" if match else part
            if dia_id in turn_ids:
                found.add(dia_id)
    return sorted(found)


def _sample(raw: dict[str, Any]) -> tuple[Conversation, list[Question], int]:
    sample_id = str(raw["sample_id"])
    conversation = raw["conversation"]
    a, _ = str(conversation["speaker_a"]), str(conversation["speaker_b"])  # a sample names both speakers
    numbers = sorted(int(m[1]) for key in conversation if (m := _SESSION_KEY.fullmatch(key)) and conversation[key])
    sample = Conversation(
        id=sample_id, name=sample_id, sessions=tuple(_session(sample_id, n, conversation, a) for n in numbers)
    )
    dia_ids = {turn.metadata["dia_id"] for turn in sample.turns}
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
                conversation=sample_id,
                category=CATEGORIES[category],
                question=str(qa["question"]),
                evidence=tuple(sorted(f"{sample_id}:{d}" for d in evidence)),
                answer=str(qa.get("answer", "")),
            )
        )
    return sample, questions, skipped


def locomo_load(*, path: Path) -> Dataset:
    """Read and check a LoCoMo file (a list of samples with `conversation` and `qa`)."""
    try:
        data = path.read_bytes()
        raw = json.loads(data)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, list) or not raw:
        raise DatasetError(f"{path}: expected a non-empty list of samples")
    samples, questions, skipped = [], [], 0
    try:
        for entry in raw:
            sample, asked, left = _sample(entry)
            samples.append(sample)
            questions += asked
            skipped += left
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: a sample lacks a field LoCoMo has ({exc})") from exc
    if len({s.id for s in samples}) != len(samples):
        raise DatasetError(f"{path}: sample ids repeat")
    return Dataset(
        name="locomo",
        title="the LoCoMo development set",
        conversations=tuple(samples),
        questions=tuple(questions),
        categories=tuple(CATEGORIES.values()),
        scoring=Scoring.IDS,
        model=MODEL,
        format=FORMAT,
        skipped_questions=skipped,
        sha256=hashlib.sha256(data).hexdigest(),
    )
