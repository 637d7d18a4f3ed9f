"""Cutting text at a sentence boundary so that it fits a token allowance (seed 004 property 4)."""

from __future__ import annotations

import re
from collections.abc import Callable

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")


def sentences(text: str) -> list[str]:
    """The text split after sentence-ending punctuation or at blank lines, separators kept."""
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        parts.append(text[start : match.start()])
        start = match.start()
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def cut_to_fit(text: str, fits: Callable[[str], bool]) -> str | None:
    """The longest whole-sentence prefix of `text` for which `fits` holds, or None.

    `fits` must be monotone in the prefix length (a longer prefix never fits better), which
    holds for token counts; binary search then needs O(log n) counts.
    """
    parts = sentences(text)
    lo, hi, best = 1, len(parts) - 1, None  # a full-length prefix is not a cut
    while lo <= hi:
        mid = (lo + hi) // 2
        prefix = "".join(parts[:mid]).strip()
        if fits(prefix):
            best, lo = prefix, mid + 1
        else:
            hi = mid - 1
    return best
