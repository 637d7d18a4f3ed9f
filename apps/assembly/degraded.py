"""Typed warnings of an assembly that left a failing part out and answered from the rest.

Each warning is `"<code>: <what happened>"`, the code from `Degraded` (as summaries' warnings read
`llm_unavailable: ...`), so a client branches on the code before the colon. Every part left out is
counted in `/metrics` (`context_architect_assembly_parts_skipped_total{part}`) and logged where it
failed (apps/core/isolation.py).
"""

from __future__ import annotations

from enum import StrEnum

from apps.metrics.registry import ASSEMBLY_PARTS_SKIPPED


class Degraded(StrEnum):
    SEARCH_FAILED = "search_failed"  # a search failed: the context comes from the other one
    CANDIDATES_FAILED = "candidates_failed"  # a kind of candidates (the window, summaries, related) is missing
    SOURCE_FAILED = "source_failed"  # a candidate source (hints, communities) failed
    CANDIDATE_SKIPPED = "candidate_skipped"  # a candidate could not be built, ranked, rendered or counted
    TEMPLATE_INVALID = "template_invalid"  # a stored template no longer passes its checks: the format's default


# The `part` label of the skipped-parts counter for each code.
PART = {
    Degraded.SEARCH_FAILED: "search",
    Degraded.CANDIDATES_FAILED: "candidates",
    Degraded.SOURCE_FAILED: "source",
    Degraded.CANDIDATE_SKIPPED: "candidate",
    Degraded.TEMPLATE_INVALID: "template",
}


def degraded(code: Degraded, message: str, *, count: int = 1) -> str:
    """The warning for `count` parts left out, counted in /metrics."""
    ASSEMBLY_PARTS_SKIPPED.labels(part=PART[code]).inc(count)
    return f"{code}: {message}"


def skipped_candidates(names: list[str]) -> str:
    """One warning naming the candidates left out (the first ten, then how many more)."""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return degraded(
        Degraded.CANDIDATE_SKIPPED,
        f"left out {shown}: {'it' if len(names) == 1 else 'they'} could not be built, ranked or packed",
        count=len(names),
    )
