"""The geometry of a session's timeline, drawn as server-rendered SVG: one stacked bar of tokens by kind
per assembly (with its budget), a zone strip under the bars, and the latency as a line below.

Pure arithmetic over a Trajectory; the template only places what this computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.web.selectors.trajectory import Trajectory

BAR, GAP, LEFT = 18, 8, 48  # bar width, space between bars, room for the axis labels
TOKENS_HEIGHT, ZONE_HEIGHT, LATENCY_HEIGHT, TOP = 160, 8, 60, 12


@dataclass(frozen=True)
class Piece:
    kind: str
    tokens: int
    y: float
    height: float


@dataclass(frozen=True)
class Bar:
    index: int
    trace_id: str
    x: int
    pieces: list[Piece]
    budget_y: float
    zone: str
    zone_changed: bool
    latency_y: float
    title: str


@dataclass(frozen=True)
class Timeline:
    bars: list[Bar]
    width: int
    height: int
    zone_y: int
    latency_top: int
    latency_path: str
    max_tokens: int
    max_elapsed_ms: float
    bar_width: int = BAR

    @property
    def tokens_bottom(self) -> int:
        return TOP + TOKENS_HEIGHT

    @property
    def latency_bottom(self) -> int:
        return self.latency_top + LATENCY_HEIGHT


def timeline(trajectory: Trajectory) -> Timeline:
    top_tokens = trajectory.max_tokens
    top_ms = trajectory.max_elapsed_ms
    zone_y = TOP + TOKENS_HEIGHT + 4
    latency_top = zone_y + ZONE_HEIGHT + 16
    bars: list[Bar] = []
    points: list[str] = []
    for position, turn in enumerate(trajectory.turns):
        x = LEFT + position * (BAR + GAP)
        bottom = float(TOP + TOKENS_HEIGHT)
        pieces = []
        for kind in trajectory.kinds:
            tokens = turn.tokens_by_kind.get(kind, 0)
            if not tokens:
                continue
            height = TOKENS_HEIGHT * tokens / top_tokens
            bottom -= height
            pieces.append(Piece(kind=kind, tokens=tokens, y=round(bottom, 2), height=round(height, 2)))
        latency_y = round(latency_top + LATENCY_HEIGHT * (1 - turn.elapsed_ms / top_ms), 2)
        points.append(f"{x + BAR / 2},{latency_y}")
        split = ", ".join(f"{tokens} {kind}" for kind, tokens in turn.tokens_by_kind.items())
        bars.append(
            Bar(
                index=turn.index,
                trace_id=turn.trace_id,
                x=x,
                pieces=pieces,
                budget_y=round(TOP + TOKENS_HEIGHT * (1 - turn.token_budget / top_tokens), 2),
                zone=turn.zone,
                zone_changed=turn.zone_changed,
                latency_y=latency_y,
                title=(
                    f"Turn {turn.index}: {turn.tokens_used} of {turn.token_budget} tokens ({split or 'empty'}), "
                    f"zone {turn.zone.replace('_', ' ')}, {turn.elapsed_ms:.1f} ms"
                    + (", from the cache" if turn.cached else "")
                ),
            )
        )
    count = len(trajectory.turns)
    return Timeline(
        bars=bars,
        width=LEFT + max(count, 1) * (BAR + GAP) + GAP,
        height=latency_top + LATENCY_HEIGHT + 8,
        zone_y=zone_y,
        latency_top=latency_top,
        latency_path=("M" + " L".join(points)) if points else "",
        max_tokens=top_tokens,
        max_elapsed_ms=round(top_ms, 1),
    )
