"""Evidence recall: how many of the turns that answer a question the returned context contains.

The matching rule, for each evidence turn:
1. a returned chunk whose `external_id` is the turn's id, not truncated, finds it;
2. a truncated chunk with that id finds it only if it still holds at least `MOSTLY_PRESENT` (75%)
   of the turn's words, counted as a multiset of lower-cased word tokens, so that a cut which
   dropped the sentence with the answer does not count as found;
3. any other chunk (for example one that merges several turns or quotes a turn) finds it if it
   contains the turn's whole text verbatim, whitespace normalised.
Recall of a question is found / evidence; questions without evidence have no recall.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from apps.assembly.engine import Chunk

MOSTLY_PRESENT = 0.75
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ChunkView:
    """What recall needs of a returned chunk, whichever method produced it."""

    external_id: str | None
    text: str
    truncated: bool = False


def chunks_from_response(chunks: Sequence[Chunk]) -> list[ChunkView]:
    """The `chunks` of a context_assemble result as ChunkViews."""
    return [ChunkView(external_id=c.external_id, text=c.text, truncated=c.truncated) for c in chunks]


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
    """Whether the chunks contain the evidence turn, by the rule in the module docstring."""
    whole = _normalise(turn_text)
    for chunk in chunks:
        if chunk.external_id == turn_id:
            if not chunk.truncated or word_coverage(evidence_text=turn_text, chunk_text=chunk.text) >= MOSTLY_PRESENT:
                return True
        elif whole and whole in _normalise(chunk.text):
            return True
    return False


def question_recall(*, evidence: Mapping[str, str], chunks: Sequence[ChunkView]) -> float | None:
    """Fraction of evidence turns ({id: text}) found in the chunks; None without evidence."""
    if not evidence:
        return None
    found = sum(1 for turn_id, text in evidence.items() if turn_found(turn_id=turn_id, turn_text=text, chunks=chunks))
    return found / len(evidence)
