"""The geometry of a session's timeline, drawn as server-rendered SVG: one stacked bar of tokens by kind
per assembly of the window (with its budget), a zone strip under the bars, the latency as a line
below; and an overview strip of every turn's tokens with the window marked, for sessions longer than it.

The window is scaled into WIDTH user units (bars get thinner as the window widens, up to MAX_TURNS),
so the chart fits the page at any length and the CSS scales it to the column.

Pure arithmetic over a Trajectory; the template only places what this computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.web.selectors.trajectory import Trajectory

BAR, GAP, LEFT = 18, 8, 48  # widest bar, space between bars, room for the axis labels
WIDTH = 1000  # user units across; a window of many turns gets thinner bars, never a wider drawing
TOKENS_HEIGHT, ZONE_HEIGHT, LATENCY_HEIGHT, TOP = 120, 8, 40, 12
OVERVIEW_HEIGHT = 36


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
    x: float
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
    bar_width: float = BAR
    overview_path: str = ""  # one vertical stroke per turn of the whole session, tokens used
    window_x: float = 0  # the window's place on the overview
    window_width: float = 0
    overview_height: int = OVERVIEW_HEIGHT

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
    count = len(trajectory.turns)
    step = min(float(BAR + GAP), (WIDTH - LEFT - GAP) / max(count, 1))
    bar = round(step * BAR / (BAR + GAP), 2)
    bars: list[Bar] = []
    points: list[str] = []
    for position, turn in enumerate(trajectory.turns):
        x = round(LEFT + position * step, 2)
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
        points.append(f"{round(x + bar / 2, 2)},{latency_y}")
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
    overview_path, window_x, window_width = _overview(trajectory)
    return Timeline(
        bars=bars,
        width=WIDTH,
        height=latency_top + LATENCY_HEIGHT + 8,
        zone_y=zone_y,
        latency_top=latency_top,
        latency_path=("M" + " L".join(points)) if points else "",
        max_tokens=top_tokens,
        max_elapsed_ms=round(top_ms, 1),
        bar_width=bar,
        overview_path=overview_path,
        window_x=window_x,
        window_width=window_width,
    )


def _overview(trajectory: Trajectory) -> tuple[str, float, float]:
    """Every turn's tokens as one path of vertical strokes across WIDTH, and where the window lies;
    nothing when the window already shows every turn."""
    total = len(trajectory.overview)
    if total <= len(trajectory.turns):
        return "", 0, 0
    step = (WIDTH - LEFT) / total
    top = max([max(used, budget) for used, budget in trajectory.overview] + [1])
    strokes = []
    for position, (used, _budget) in enumerate(trajectory.overview):
        x = round(LEFT + (position + 0.5) * step, 1)
        height = round((OVERVIEW_HEIGHT - 4) * used / top, 1)
        strokes.append(f"M{x},{OVERVIEW_HEIGHT - 2}v-{max(height, 1)}")
    return "".join(strokes), round(LEFT + trajectory.start * step, 1), round(len(trajectory.turns) * step, 1)
