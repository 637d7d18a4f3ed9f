"""The conversation graph of a session (seed 002) laid out for an SVG: branches, communities and the
resolution each message would get at the current turn.

The resolution comes from the engine itself (`engine.policy.allowed_depths` over the message's
ladder), with the distance counted as assembly counts it (turns back from the newest message of
the window, important turns keeping full detail) and community stand-ins applied as
`sources.apply_stand_ins` applies them: a far member of a community is hidden behind its summary.
Four queries: the layer tree, the messages, the communities and their members.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.assembly.engine import Candidate
from apps.assembly.engine.candidates import item_candidate
from apps.assembly.engine.policy import PRESETS, Resolution, allowed_depths
from apps.assembly.retrieval import FULL_DETAIL_IMPORTANCE
from apps.conversations.importance import DECISION_IMPORTANCE
from apps.conversations.models import Community, CommunityMember
from apps.layers.models import Item, ItemKind, Layer
from apps.layers.selectors import layer_scope, layer_tree

MAX_MESSAGES = 300
RESOLUTIONS = ("full", "summary", "title", "hidden")
# x step per message, y step per branch lane, and the margin around the drawing (SVG user units)
DX, DY, MARGIN = 34, 44, 24
COMMUNITY_COLOURS = ("#b35806", "#542788", "#1b7837", "#c51b7d", "#2166ac", "#8c510a", "#01665e", "#762a83")


@dataclass(frozen=True)
class Node:
    """One message: where it is drawn, what it says and how assembly would show it now."""

    id: int
    x: int
    y: int
    lane: int
    role: str
    excerpt: str
    distance: int | None  # None: an important turn, full detail at any distance
    resolution: str  # full | summary | title | hidden
    why: str
    communities: tuple[int, ...]
    colour: str  # the first community's colour, "" when in none
    pinned: bool
    important: bool


@dataclass(frozen=True)
class Edge:
    parent: int
    child: int
    path: str  # SVG path data


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
    """The child on the longest branch continues its parent's lane; every other child (a fork) and
    every root opens a new one. `order` is oldest first."""
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
    next_lane = 0
    for item_id in order:
        up = parent.get(item_id)
        if up is not None and up in lane and heir.get(up) == item_id:
            lane[item_id] = lane[up]
        else:
            lane[item_id] = next_lane
            next_lane += 1
    return lane


def _edge_path(x1: int, y1: int, x2: int, y2: int) -> str:
    if y1 == y2:
        return f"M{x1},{y1} L{x2},{y2}"
    middle = (x1 + x2) // 2
    return f"M{x1},{y1} C{middle},{y1} {middle},{y2} {x2},{y2}"


def conversation_graph(*, layer: Layer, preset: str = "balanced", zone: str = "normal") -> ConversationGraph:
    """The layer's messages (and its sub-sessions'), the newest MAX_MESSAGES, laid out by branch."""
    resolution = PRESETS.get(preset, PRESETS["balanced"])
    _, own, descendants = layer_scope(tree=layer_tree(workspace_id=layer.workspace_id), layer_id=layer.pk)
    messages = Item.objects.filter(
        workspace_id=layer.workspace_id, layer_id__in=[*own, *descendants], kind=ItemKind.MESSAGE
    )
    total = messages.count()
    rows = list(
        messages.order_by("-created_at", "-id").values(
            "id", "parent_id", "role", "type", "title", "content", "created_at", "importance", "pinned", "metadata"
        )[:MAX_MESSAGES]
    )
    newest_first = [row["id"] for row in rows]
    rows.reverse()
    ids = [row["id"] for row in rows]
    communities = list(Community.objects.filter(workspace_id=layer.workspace_id, layer_id__in=[*own, *descendants]))
    colour_of = {c.pk: COMMUNITY_COLOURS[i % len(COMMUNITY_COLOURS)] for i, c in enumerate(communities)}
    member_of: dict[int, list[int]] = {}
    sizes: dict[int, int] = {}
    for community_id, item_id in CommunityMember.objects.filter(community__in=communities).values_list(
        "community_id", "item_id"
    ):
        member_of.setdefault(item_id, []).append(community_id)
        sizes[community_id] = sizes.get(community_id, 0) + 1

    parent: dict[int, int | None] = {row["id"]: row["parent_id"] for row in rows}
    lane = _lanes(ids, parent)
    position = {item_id: index for index, item_id in enumerate(ids)}
    distance_of = {item_id: distance for distance, item_id in enumerate(newest_first)}
    nodes: list[Node] = []
    for row in rows:
        item_id = row["id"]
        important = row["importance"] >= FULL_DETAIL_IMPORTANCE
        distance = None if important else distance_of[item_id]
        candidate = item_candidate(
            {**row, "kind": ItemKind.MESSAGE, "layer_id": layer.pk},
            layer_name=layer.name,
            origin="conversation",
            distance=distance,
        )
        depth, why = _resolution_of(candidate, zone=zone, resolution=resolution)
        if not row["pinned"] and distance_of[item_id] > resolution.title_distance:
            # Only the newest title_distance + 1 turns are loaded as the window (pinned items always are).
            depth, why = "hidden", "beyond the conversation window (unless a search finds it)"
        replaceable = not row["pinned"] and row["importance"] < DECISION_IMPORTANCE
        far = distance_of[item_id] > resolution.summary_distance
        if depth != "hidden" and far and replaceable and member_of.get(item_id):
            depth, why = "hidden", "its community's summary stands in for it"
        text = (row["title"] or row["content"]).replace("\n", " ")
        x = MARGIN + position[item_id] * DX
        y = MARGIN + lane[item_id] * DY
        own_communities = tuple(member_of.get(item_id, ()))
        nodes.append(
            Node(
                id=item_id,
                x=x,
                y=y,
                lane=lane[item_id],
                role=row["role"] or "message",
                excerpt=text[:140] + ("…" if len(text) > 140 else ""),
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
        if (up := parent.get(node.id)) is not None and up in by_id
    ]
    children: dict[int, int] = {}
    for edge in edges:
        children[edge.parent] = children.get(edge.parent, 0) + 1
    lanes = max(lane.values(), default=-1) + 1
    return ConversationGraph(
        nodes=nodes,
        edges=edges,
        communities=[
            CommunityView(
                id=c.pk, kind=c.kind, key=c.key, title=c.title, size=sizes.get(c.pk, 0), colour=colour_of[c.pk]
            )
            for c in communities
        ],
        lanes=lanes,
        forks=sum(1 for count in children.values() if count > 1),
        width=2 * MARGIN + max(len(nodes) - 1, 0) * DX,
        height=2 * MARGIN + max(lanes - 1, 0) * DY,
        preset=preset if preset in PRESETS else "balanced",
        omitted=max(total - len(rows), 0),
    )
