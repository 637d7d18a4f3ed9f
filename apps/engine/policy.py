"""What may go in, and how deep: graduated token zones and distance resolution."""

from __future__ import annotations

from dataclasses import dataclass

from apps.engine.ladder import ladder
from apps.engine.types import Candidate, Rung

ZONES = ("normal", "soft_warning", "conservative", "wrap_up", "emergency")
ITEM_DEPTHS = ("full", "summary", "title")
SUMMARY_DEPTHS = ("detailed", "paragraph", "sentence")


@dataclass(frozen=True)
class ZoneThresholds:
    """Fractions of the context window already used at which each zone starts."""

    soft_warning: float = 0.60
    conservative: float = 0.75
    wrap_up: float = 0.85
    emergency: float = 0.95


def zone_for(*, tokens_used: int | None, context_window: int | None, thresholds: ZoneThresholds) -> str:
    """The zone for the caller's current usage; normal when the usage is unknown."""
    if not context_window or tokens_used is None:
        return "normal"
    used = tokens_used / context_window
    if used >= thresholds.emergency:
        return "emergency"
    if used >= thresholds.wrap_up:
        return "wrap_up"
    if used >= thresholds.conservative:
        return "conservative"
    if used >= thresholds.soft_warning:
        return "soft_warning"
    return "normal"


@dataclass(frozen=True)
class Resolution:
    """Messages within each distance of the newest turn keep that much detail."""

    full_context_distance: int = 5
    summary_distance: int = 20
    title_distance: int = 50
    # Token caps per message node and depth: a longer rung is cut to its cap.
    max_full_tokens_per_node: int = 500
    max_summary_tokens: int = 100
    max_title_tokens: int = 20

    def cap(self, depth: str) -> int | None:
        """The most tokens a message's rung of this depth may take (None: no cap)."""
        return {
            "full": self.max_full_tokens_per_node,
            "summary": self.max_summary_tokens,
            "title": self.max_title_tokens,
        }.get(depth)


PRESETS: dict[str, Resolution] = {
    "aggressive": Resolution(full_context_distance=3, summary_distance=10, title_distance=25, max_summary_tokens=50),
    "balanced": Resolution(),
    "context_rich": Resolution(
        full_context_distance=10, summary_distance=40, title_distance=100, max_summary_tokens=150
    ),
}

# In the conservative zone at most this many non-pinned candidates go in ("fewer items").
CONSERVATIVE_MAX_ITEMS = 5


def allowed_depths(
    candidate: Candidate, *, zone: str, resolution: Resolution, rungs: tuple[Rung, ...] | None = None
) -> tuple[tuple[str, ...], str]:
    """The depths this candidate may take, richest first, or () and the reason it may not go in.

    `rungs`: the candidate's ladder when the caller already has it (the packer does)."""
    if zone == "emergency":
        return (), "zone"
    depths = tuple(rung.depth for rung in (ladder(candidate) if rungs is None else rungs))
    if candidate.source == "error_hint" or candidate.pinned:
        return depths, ""
    if zone == "wrap_up":
        return (), "zone"
    if candidate.distance is None and zone == "normal":  # a search hit in the normal zone: every depth
        return depths, ""
    if candidate.distance is not None:  # a message of the conversation window, not a search hit
        d = candidate.distance
        if d <= resolution.full_context_distance:
            pass
        elif d <= resolution.summary_distance:
            depths = tuple(x for x in depths if x != "full")
        elif d <= resolution.title_distance:
            depths = tuple(x for x in depths if x == "title")
        else:
            return (), "hidden_by_distance"
    if zone == "soft_warning" and candidate.source == "item":
        lighter = tuple(x for x in depths if x != "full")
        depths = lighter or depths
    if zone == "conservative":
        if candidate.source != "summary":
            return (), "zone"
        depths = tuple(x for x in depths if x != "detailed") or depths
    return (depths, "") if depths else ((), "hidden_by_distance")


def admitted(candidate: Candidate, *, kinds: tuple[str, ...], types: tuple[str, ...]) -> bool:
    """Whether the request's `kinds` and `types` filters let this candidate in at all.

    The filters name item kinds and item types, so a filter keeps only items that match it: a
    layer summary, a community summary or an error hint matches no item kind or type, and a
    conversation turn (type "") matches no type filter. No filter admits everything."""
    if kinds and (candidate.source != "item" or candidate.kind not in kinds):
        return False
    return not types or (candidate.source == "item" and candidate.type in types)
