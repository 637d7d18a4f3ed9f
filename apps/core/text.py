"""Cutting text so that it fits: at a sentence boundary, or at a word boundary with an ellipsis.

The one sentence cutter of the project: assembly's packer cuts a chunk
with `cut_to_fit`, the summaries' last-resort truncation and the extractive summarizer cut with
`longest_prefix` and `clip_words`. `fits` is a check on the candidate text (an exact token count
against an allowance); it must be monotone in the prefix length (a longer prefix never fits
better), which holds for token counts, so a binary search needs O(log n) checks. Only texts that
were checked are returned, so a result always fits even if `fits` were not monotone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")

Fits = Callable[[str], bool]


def sentences(text: str) -> list[str]:
    """The text split after sentence-ending punctuation or at blank lines, separators kept.

    Lossless: `"".join(sentences(text))` is `text` minus blank-only parts.
    """
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        parts.append(text[start : match.start()])
        start = match.start()
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def longest_prefix(
    parts: Sequence[str], fits: Fits, *, sep: str = "", least: int = 1, most: int | None = None
) -> str | None:
    """The longest `sep`-joined, stripped prefix of `parts` (between `least` and `most` parts) that fits.

    None when not even `least` parts fit (or there are fewer parts than `least`).
    """
    lo, hi, best = least, len(parts) if most is None else min(most, len(parts)), None
    while lo <= hi:
        mid = (lo + hi) // 2
        prefix = sep.join(parts[:mid]).strip()
        if fits(prefix):
            best, lo = prefix, mid + 1
        else:
            hi = mid - 1
    return best


def cut_to_fit(text: str, fits: Fits) -> str | None:
    """The longest whole-sentence prefix of `text`, shorter than the text, for which `fits` holds."""
    parts = sentences(text)
    return longest_prefix(parts, fits, most=len(parts) - 1)  # a full-length prefix is not a cut


def clip_words(text: str, fits: Fits, *, least: int = 1, trim: str = "") -> str | None:
    """The longest prefix of at least `least` (and fewer than all) words of `text`, with an ellipsis, that fits.

    `trim`: characters stripped from the end of the prefix before the ellipsis (dangling commas).
    """
    words = text.split()
    lo, hi, best = least, len(words) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        clipped = " ".join(words[:mid]).rstrip(trim) + ELLIPSIS
        if fits(clipped):
            best, lo = clipped, mid + 1
        else:
            hi = mid - 1
    return best
