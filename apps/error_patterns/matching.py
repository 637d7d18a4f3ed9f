"""Nearest error patterns to a signature: exact signature first, then by similarity.

Similarity is the Jaccard index over words and adjacent word pairs, so a reworded or truncated
message still finds its pattern (shared words), word order counts (shared pairs), and a different
error of the same library does not come close. Features are cached per signature, so ranking the
few hundred rows a selector loads costs well under a millisecond per row on the hot path.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from typing import TypeVar

_WORD = re.compile(r"<\w+>|[a-z][a-z0-9_]+")
T = TypeVar("T")


@functools.lru_cache(maxsize=8192)
def _features(signature: str) -> frozenset[str]:
    words = _WORD.findall(signature)
    return frozenset(words) | frozenset(f"{a} {b}" for a, b in itertools.pairwise(words))


def similarity(a: str, b: str) -> float:
    """1.0 for equal signatures, 0.0 for nothing in common."""
    if a == b:
        return 1.0
    fa, fb = _features(a), _features(b)
    return len(fa & fb) / len(fa | fb) if fa and fb else 0.0


def rank_matches(
    signature: str, rows: Iterable[tuple[str, T]], *, threshold: float, limit: int
) -> list[tuple[float, T]]:
    """(similarity, row) for rows at or above `threshold`, best first."""
    scored = [(similarity(signature, row_signature), row) for row_signature, row in rows]
    kept = [(score, row) for score, row in scored if score >= threshold]
    kept.sort(key=lambda pair: -pair[0])
    return kept[:limit]
