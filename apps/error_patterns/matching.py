"""Nearest error patterns to a signature: exact signature first, then by similarity.

Similarity is the mean of two Jaccard indexes, over words and over character trigrams, so a
reworded or truncated message still finds its pattern and a different error of the same library
does not. Pure functions over already-loaded rows; the selectors bound how many rows they load.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

_WORD = re.compile(r"<\w+>|[a-z][a-z0-9_]+")
T = TypeVar("T")


def _trigrams(text: str) -> set[str]:
    squeezed = f" {text} "
    return {squeezed[i : i + 3] for i in range(len(squeezed) - 2)}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def similarity(a: str, b: str) -> float:
    """1.0 for equal signatures, 0.0 for nothing in common."""
    if a == b:
        return 1.0
    words = _jaccard(set(_WORD.findall(a)), set(_WORD.findall(b)))
    return (words + _jaccard(_trigrams(a), _trigrams(b))) / 2


def rank_matches(
    signature: str, rows: Iterable[tuple[str, T]], *, threshold: float, limit: int
) -> list[tuple[float, T]]:
    """(similarity, row) for rows at or above `threshold`, exact matches first, best first."""
    scored = [(similarity(signature, row_signature), row) for row_signature, row in rows]
    kept = [(score, row) for score, row in scored if score >= threshold]
    kept.sort(key=lambda pair: -pair[0])
    return kept[:limit]
