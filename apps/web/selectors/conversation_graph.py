"""The conversation graph of a session laid out for an SVG: branches, communities and the
resolution each message would get at the current turn.

Drawn by its structure, not message by message: a line per branch (a linear chat, threaded or not,
is one line), each line in runs of the same resolution, a curve where a branch forks off, a band
per community over the messages it spans, and a dot for each pinned or important message. The
messages themselves are listed by `messages_page`, a page at a time. The drawing is WIDTH units
across whatever the length, so 500 turns cost no more HTML than 50.

The resolution comes from the engine itself (`engine.policy.allowed_depths` over the message's
ladder), with the distance counted as assembly counts it (turns back from the newest message of
the window, important turns keeping full detail) and community stand-ins shown as the packer
applies them when the community gets in: a far member of a community is hidden behind its summary.
Four queries: the layer tree, the messages, the communities and their members.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from apps.assembly.message_rungs import with_written_rungs
from apps.assembly.retrieval import FULL_DETAIL_IMPORTANCE
from apps.conversations.importance import DECISION_IMPORTANCE
from apps.conversations.selectors import communities_of_layers, community_members
from apps.engine import Candidate
from apps.engine.candidates import item_candidate
from apps.engine.policy import PRESETS, Resolution, allowed_depths
from apps.layers.models import ItemKind, Layer
from apps.layers.selectors import layer_scope, layer_tree, messages_newest

MAX_MESSAGES = 2000
RESOLUTIONS = ("full", "summary", "title", "hidden")
# widest x step per message, y step per branch lane, the margin around the drawing, the drawing's
# width, and the height of a community band (SVG user units)
DX, DY, MARGIN, WIDTH, BAND, RUN = 34, 22, 14, 1000, 7, 8
MESSAGES_PER_PAGE = 10
COMMUNITY_COLOURS = ("#b35806", "#542788", "#1b7837", "#c51b7d", "#2166ac", "#8c510a", "#01665e", "#762a83")


@dataclass(frozen=True)
class Node:
    """One message: where it is drawn, what it says and how assembly would show it now."""

    id: int
    number: int  # 1-based, oldest first
    x: float
    y: int
    lane: int
    role: str
    excerpt: str
    text: str  # the whole title or content, for the search
    created_at: datetime
    distance: int | None  # None: an important turn, full detail at any distance
    resolution: str  # full | summary | title | hidden
    why: str
    communities: tuple[int, ...]
    colour: str  # the first community's colour, "" when in none
    pinned: bool
    important: bool


@dataclass(frozen=True)
class Edge:
    """A fork: the curve from a message to the first message of a branch that answers it."""

    parent: int
    child: int
    path: str  # SVG path data


@dataclass(frozen=True)
class Run:
    """Consecutive messages of one branch with the same resolution: one stroke of the line."""

    lane: int
    x1: float
    x2: float
    y: int
    resolution: str
    count: int

    @property
    def left(self) -> float:
        return round(self.x1 - RUN / 2, 1)

    @property
    def top(self) -> float:
        return self.y - RUN / 2

    @property
    def width(self) -> float:
        return round(self.x2 - self.x1 + RUN, 1)


@dataclass(frozen=True)
class Band:
    """A community over the span of its members in the drawing."""

    community: int
    x: float
    y: int
    width: float
    colour: str
    title: str


@dataclass(frozen=True)
class CommunityView:
    id: int
    kind: str
    key: str
    title: str
    size: int
    colour: str


@dataclass(frozen=True)
class ConversationGraph:
    nodes: list[Node]
    edges: list[Edge]
    communities: list[CommunityView]
    lanes: int
    forks: int
    width: int
    height: int
    preset: str
    omitted: int  # older messages left out of the drawing (beyond MAX_MESSAGES)
    runs: list[Run] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    lane_lines: list[tuple[float, float, int]] = field(default_factory=list)  # x1, x2, y of each branch

    @property
    def total(self) -> int:
        """Every message of the layer, drawn or not."""
        return len(self.nodes) + self.omitted

    @property
    def markers(self) -> list[Node]:
        return [node for node in self.nodes if node.pinned or node.important]

    def count(self, resolution: str) -> int:
        return sum(1 for node in self.nodes if node.resolution == resolution)

    @property
    def counts(self) -> list[tuple[str, int]]:
        return [(name, self.count(name)) for name in RESOLUTIONS]


def _resolution_of(candidate: Candidate, *, zone: str, resolution: Resolution) -> tuple[str, str]:
    depths, why = allowed_depths(candidate, zone=zone, resolution=resolution)
    if not depths:
        return "hidden", why.replace("_", " ")
    return depths[0], "richest depth allowed"


def _lanes(order: list[int], parent: dict[int, int | None]) -> dict[int, int]:
    """Lane 0 is the main line: every message without a parent (a chat written turn by turn without
    links is a line, not a branch per turn) and, at each message, the child on its longest branch.
    Every other child (a fork) opens a new lane that its own heirs continue. `order` is oldest first."""
    height: dict[int, int] = {}
    for item_id in reversed(order):  # children come after their parent in time
        height.setdefault(item_id, 0)
        up = parent.get(item_id)
        if up is not None:
            height[up] = max(height.get(up, 0), height[item_id] + 1)
    heir: dict[int, int] = {}  # parent → the child that continues its lane
    for item_id in order:
        up = parent.get(item_id)
        if up is not None and (up not in heir or height[item_id] > height[heir[up]]):
            heir[up] = item_id
    lane: dict[int, int] = {}
    next_lane = 1
    for item_id in order:
        up = parent.get(item_id)
        if up is None or up not in lane:  # a root, or answering a message older than the drawing
            lane[item_id] = 0
        elif heir.get(up) == item_id:
            lane[item_id] = lane[up]
        else:
            lane[item_id] = next_lane
            next_lane += 1
    return lane


def _edge_path(x1: float, y1: int, x2: float, y2: int) -> str:
    if y1 == y2:
        return f"M{x1},{y1} L{x2},{y2}"
    middle = round((x1 + x2) / 2, 1)
    return f"M{x1},{y1} C{middle},{y1} {middle},{y2} {x2},{y2}"


def conversation_graph(*, layer: Layer, preset: str = "balanced", zone: str = "normal") -> ConversationGraph:
    """The layer's messages (and its sub-sessions'), the newest MAX_MESSAGES, laid out by branch."""
    resolution = PRESETS.get(preset, PRESETS["balanced"])
    _, own, descendants = layer_scope(tree=layer_tree(workspace_id=layer.workspace_id), layer_id=layer.pk)
    total, rows = messages_newest(workspace_id=layer.workspace_id, layer_ids=[*own, *descendants], limit=MAX_MESSAGES)
    newest_first = [row["id"] for row in rows]
    rows.reverse()
    ids = [row["id"] for row in rows]
    communities = communities_of_layers(workspace_id=layer.workspace_id, layer_ids=[*own, *descendants])
    colour_of = {c.pk: COMMUNITY_COLOURS[i % len(COMMUNITY_COLOURS)] for i, c in enumerate(communities)}
    member_of: dict[int, list[int]] = {}
    sizes: dict[int, int] = {}
    for community_id, item_ids in community_members(communities=communities).items():
        for item_id in item_ids:
            member_of.setdefault(item_id, []).append(community_id)
        sizes[community_id] = len(item_ids)

    parent: dict[int, int | None] = {row["id"]: row["parent_id"] for row in rows}
    lane = _lanes(ids, parent)
    position = {item_id: index for index, item_id in enumerate(ids)}
    step = min(float(DX), (WIDTH - 2 * MARGIN) / max(len(ids) - 1, 1))
    lanes = max(lane.values(), default=-1) + 1
    band_rows = 2 if communities else 0
    top = MARGIN + band_rows * (BAND + 3)
    distance_of = {item_id: distance for distance, item_id in enumerate(newest_first)}
    important_ids = {row["id"] for row in rows if row["importance"] >= FULL_DETAIL_IMPORTANCE}
    candidates = with_written_rungs(  # long turns' LLM summaries, as assembly gives them
        [
            item_candidate(
                {**row, "kind": ItemKind.MESSAGE, "layer_id": layer.pk},
                layer_name=layer.name,
                origin="conversation",
                distance=None if row["id"] in important_ids else distance_of[row["id"]],
            )
            for row in rows
        ]
    )
    nodes: list[Node] = []
    for row, candidate in zip(rows, candidates, strict=True):
        item_id = row["id"]
        important = item_id in important_ids
        distance = candidate.distance
        depth, why = _resolution_of(candidate, zone=zone, resolution=resolution)
        if not row["pinned"] and distance_of[item_id] > resolution.title_distance:
            # Only the newest title_distance + 1 turns are loaded as the window (pinned items always are).
            depth, why = "hidden", "beyond the conversation window (unless a search finds it)"
        replaceable = not row["pinned"] and row["importance"] < DECISION_IMPORTANCE
        far = distance_of[item_id] > resolution.summary_distance
        if depth != "hidden" and far and replaceable and member_of.get(item_id):
            depth, why = "hidden", "its community's summary stands in for it"
        text = (row["title"] or row["content"]).replace("\n", " ")
        x = round(MARGIN + position[item_id] * step, 1)
        y = top + lane[item_id] * DY
        own_communities = tuple(member_of.get(item_id, ()))
        nodes.append(
            Node(
                id=item_id,
                number=position[item_id] + 1,
                x=x,
                y=y,
                lane=lane[item_id],
                role=row["role"] or "message",
                excerpt=text[:140] + ("…" if len(text) > 140 else ""),
                text=text,
                created_at=row["created_at"],
                distance=distance,
                resolution=depth,
                why=why,
                communities=own_communities,
                colour=colour_of[own_communities[0]] if own_communities else "",
                pinned=row["pinned"],
                important=important,
            )
        )
    by_id = {node.id: node for node in nodes}
    edges = [
        Edge(parent=up, child=node.id, path=_edge_path(by_id[up].x, by_id[up].y, node.x, node.y))
        for node in nodes
        if (up := parent.get(node.id)) is not None and up in by_id and by_id[up].lane != node.lane
    ]
    children: dict[int, int] = {}
    for up in parent.values():
        if up is not None and up in by_id:
            children[up] = children.get(up, 0) + 1
    views = [
        CommunityView(id=c.pk, kind=c.kind, key=c.key, title=c.title, size=sizes.get(c.pk, 0), colour=colour_of[c.pk])
        for c in communities
    ]
    return ConversationGraph(
        nodes=nodes,
        edges=edges,
        communities=views,
        lanes=lanes,
        forks=sum(1 for count in children.values() if count > 1),
        width=WIDTH,
        height=top + max(lanes - 1, 0) * DY + MARGIN,
        preset=preset if preset in PRESETS else "balanced",
        omitted=max(total - len(rows), 0),
        runs=_runs(nodes),
        bands=_bands(nodes, views),
        lane_lines=_lane_lines(nodes),
    )


def _runs(nodes: list[Node]) -> list[Run]:
    """Each branch cut where the resolution changes (nodes oldest first)."""
    runs: list[Run] = []
    open_run: dict[int, Run] = {}
    for node in nodes:
        current = open_run.get(node.lane)
        if current is not None and current.resolution == node.resolution:
            open_run[node.lane] = Run(node.lane, current.x1, node.x, node.y, node.resolution, current.count + 1)
            continue
        if current is not None:
            runs.append(current)
        open_run[node.lane] = Run(node.lane, node.x, node.x, node.y, node.resolution, 1)
    return runs + list(open_run.values())


def _lane_lines(nodes: list[Node]) -> list[tuple[float, float, int]]:
    span: dict[int, tuple[float, float, int]] = {}
    for node in nodes:
        x1, _, y = span.get(node.lane, (node.x, node.x, node.y))
        span[node.lane] = (x1, node.x, y)
    return [span[lane] for lane in sorted(span)]


def _bands(nodes: list[Node], communities: list[CommunityView]) -> list[Band]:
    """A community's band runs from its first to its last member drawn, on one of two rows, so that
    neighbouring communities (a session's topics follow each other) do not hide each other."""
    xs: dict[int, list[float]] = {}
    for node in nodes:
        for community_id in node.communities:
            xs.setdefault(community_id, []).append(node.x)
    bands = []
    for row, community in enumerate(c for c in communities if c.id in xs):
        low, high = min(xs[community.id]), max(xs[community.id])
        bands.append(
            Band(
                community=community.id,
                x=round(low - 2, 1),
                y=MARGIN + (row % 2) * (BAND + 3),
                width=round(high - low + 4, 1),
                colour=community.colour,
                title=f"{community.kind} {community.key}: {community.title[:80]} ({community.size} messages)",
            )
        )
    return bands


def messages_page(*, graph: ConversationGraph, q: str = "", page: int = 1) -> tuple[list[Node], int, int, int]:
    """One page of the graph's messages, newest first, those containing `q` (any case) when given:
    (the page's messages, how many match, the page number, the number of pages)."""
    needle = q.strip().casefold()
    matches = [node for node in reversed(graph.nodes) if not needle or needle in node.text.casefold()]
    pages = max((len(matches) + MESSAGES_PER_PAGE - 1) // MESSAGES_PER_PAGE, 1)
    page = min(max(page, 1), pages)
    first = (page - 1) * MESSAGES_PER_PAGE
    return matches[first : first + MESSAGES_PER_PAGE], len(matches), page, pages
