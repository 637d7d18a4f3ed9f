"""The compression ladder of a candidate: full → summary → title for items, or the stored depths.

An item without a stored summary gets an extractive one (its leading sentences); a title is the
item's own title or its first words (the title's first words when the title is no shorter than
the rung above). Rungs that would not be shorter than the one above are dropped, so every step
down the ladder saves tokens, but for a text of TITLE_WORDS words or fewer: it is its own title,
and keeps a title rung of the same text.
"""

from __future__ import annotations

import functools

from apps.core.text import sentences
from apps.engine.types import Candidate, Rung

SUMMARY_CHARS = 280
TITLE_WORDS = 12


def _lead(text: str, limit: int) -> str:
    """Whole leading sentences up to `limit` characters (at least the first one)."""
    parts = sentences(text)
    out = ""
    for part in parts:
        if out and len(out) + len(part) > limit:
            break
        out += part
    return out.strip()


def _first_words(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")


def ladder(candidate: Candidate) -> tuple[Rung, ...]:
    """The candidate's rungs, richest first; never empty."""
    if candidate.rungs:
        return candidate.rungs
    return _derived(candidate.content, candidate.summary, candidate.title)


@functools.lru_cache(maxsize=16_384)
def _derived(full: str, stored: str | None, title: str) -> tuple[Rung, ...]:
    """Rungs from the text alone (a pure function of its arguments, so recent ones are kept).

    `title`: the candidate's own title; without one, the content's first words (derived here,
    inside the cache: splitting a long content on every request is what the cache saves)."""
    rungs = [Rung("full", full)]
    summary = stored or _lead(full, SUMMARY_CHARS)
    if summary and len(summary) < len(full):
        rungs.append(Rung("summary", summary, prefix=not stored))
    # An own title no shorter than the rung above (a client that titles a turn with its text) is
    # cut to its first words, so the turn keeps a title rung instead of vanishing past the summary.
    title = next((t for t in (title, _first_words(title or full)) if t and len(t) < len(rungs[-1].text)), "")
    if title:
        rungs.append(Rung("title", title))
    elif len(rungs) == 1 and len(full.split()) <= TITLE_WORDS:
        # A short turn ("Use option B.") is its own title: it keeps a title rung, the same text, so
        # beyond the full distance it still comes in as a title would instead of vanishing.
        rungs.append(Rung("title", full))
    return tuple(rungs)
