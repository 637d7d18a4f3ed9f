"""Evidence recall: the share of a question's evidence turns that an answer contains.

One rule for the lab and the product: `eval_locomo` / `eval_retrieval` (apps/bench/evaluation) and the
pages' experiments (apps/experiments/run.py) score with these functions.

Each set says how an evidence turn counts as found (Scoring):
- IDS (LoCoMo's README): a chunk carries the turn's external id;
- TEXT: 1. a chunk with the turn's id, not truncated; 2. a truncated chunk with that id only while it
  still holds `MOSTLY_PRESENT` (75%) of the turn's words, counted as a multiset of lower-cased word
  tokens, so a cut that dropped the sentence with the answer does not count; 3. any other chunk (one
  that merges several turns or quotes a turn) if it contains the turn's whole text verbatim,
  whitespace normalised.
Recall of a question = found / evidence; an answer whose context recounts above its budget scores 0
(and is counted as a violation); a question without evidence has no recall.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

MOSTLY_PRESENT = 0.75
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


class Scoring(StrEnum):
    """How an evidence turn counts as found in the service's answer.

    IDS: a returned chunk carries the turn's external id (LoCoMo's README: "selected turns"; the
    experiments' rule: their expected items are named by external id).
    TEXT: as IDS, but a truncated chunk counts only while it holds `MOSTLY_PRESENT` of the turn's
    words, and any other chunk that contains the turn's whole text counts too.
    Either way an answer above its budget scores 0."""

    IDS = "ids"
    TEXT = "text"


@dataclass(frozen=True)
class ChunkView:
    """What recall needs of a returned chunk, whichever method produced it."""

    external_id: str | None
    text: str
    truncated: bool = False


def word_coverage(*, evidence_text: str, chunk_text: str) -> float:
    """Share of the evidence's words (with multiplicity) that the chunk text still contains."""
    wanted = Counter(_WORD.findall(evidence_text.lower()))
    if not wanted:
        return 1.0
    have = Counter(_WORD.findall(chunk_text.lower()))
    return sum(min(n, have[w]) for w, n in wanted.items()) / sum(wanted.values())


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def turn_found(*, turn_id: str, turn_text: str, chunks: Sequence[ChunkView]) -> bool:
    """Whether the chunks contain the evidence turn by the TEXT rule."""
    whole = _normalise(turn_text)
    for chunk in chunks:
        if chunk.external_id == turn_id:
            if not chunk.truncated or word_coverage(evidence_text=turn_text, chunk_text=chunk.text) >= MOSTLY_PRESENT:
                return True
        elif whole and whole in _normalise(chunk.text):
            return True
    return False


def evidence_missed(*, scoring: Scoring, evidence: Mapping[str, str], chunks: Sequence[ChunkView]) -> tuple[str, ...]:
    """The evidence turns ({id: content}, in order) that the chunks do not contain by `scoring`."""
    if scoring is Scoring.IDS:
        ids = {chunk.external_id for chunk in chunks}
        return tuple(turn_id for turn_id in evidence if turn_id not in ids)
    return tuple(t for t, text in evidence.items() if not turn_found(turn_id=t, turn_text=text, chunks=chunks))


def question_recall(
    *, scoring: Scoring, evidence: Mapping[str, str], chunks: Sequence[ChunkView], over_budget: bool = False
) -> float | None:
    """Fraction of the evidence turns ({id: content}) found in the chunks; 0 over budget, None without evidence."""
    if not evidence:
        return None
    if over_budget:
        return 0.0
    missed = evidence_missed(scoring=scoring, evidence=evidence, chunks=chunks)
    return (len(evidence) - len(missed)) / len(evidence)
