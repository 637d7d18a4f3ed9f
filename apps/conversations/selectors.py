"""Reads of the conversation graph: branches of a session, the thread through a message, communities.

Parent links define the tree: a message without a parent starts a thread; a message with two
or more children is a fork. One query loads a layer's (id, parent, time) skeleton; the messages
shown are loaded by id in a second query.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from apps.conversations.models import Community, GraphState, MessageSummary
from apps.layers.models import Item, ItemKind, Layer

MESSAGE_FIELDS = ("id", "layer_id", "role", "title", "content", "created_at", "parent_id", "task_ids", "importance")


@dataclass(frozen=True)
class Skeleton:
    """A layer's messages as a tree: parent and time per id, children in time order."""

    parent: dict[int, int | None]
    created: dict[int, datetime]
    children: dict[int, list[int]]

    @property
    def roots(self) -> list[int]:
        return [i for i, p in self.parent.items() if p is None or p not in self.parent]


def skeleton(*, layer_id: int) -> Skeleton:
    rows = (
        Item.objects.filter(layer_id=layer_id, kind=ItemKind.MESSAGE)
        .order_by("created_at", "id")
        .values_list("id", "parent_id", "created_at")
    )
    parent: dict[int, int | None] = {}
    created: dict[int, datetime] = {}
    children: dict[int, list[int]] = {}
    for item_id, parent_id, created_at in rows:
        parent[item_id], created[item_id] = parent_id, created_at
        children.setdefault(item_id, [])
        if parent_id is not None:
            children.setdefault(parent_id, []).append(item_id)
    return Skeleton(parent=parent, created=created, children=children)


def _path_to(s: Skeleton, item_id: int) -> list[int]:
    path, seen = [item_id], {item_id}
    while (up := s.parent.get(path[-1])) is not None and up in s.parent and up not in seen:
        path.append(up)
        seen.add(up)
    return path[::-1]


def messages_by_id(*, ids: list[int]) -> list[dict[str, Any]]:
    """The messages' display fields, in the order of `ids`."""
    rows = {r["id"]: r for r in Item.objects.filter(pk__in=ids).values(*MESSAGE_FIELDS)}
    return [rows[i] for i in ids if i in rows]


BRANCHES_PAGE = 100  # branches per page by default
BRANCHES_MAX_PAGE = 1000


@dataclass(frozen=True)
class _Branch:
    leaf: int
    root: int
    fork: int | None
    joins: int | None
    joins_branch: int | None
    length: int
    tail: list[int]


def _branches(s: Skeleton) -> list[_Branch]:
    """Every root → leaf path, newest leaf last, each as the part no earlier branch holds (its tail)
    and the message where that part joins an earlier branch: linear in the conversation, where the
    whole paths (one per leaf, each up to the conversation's length) grew with its square."""
    leaves = [i for i, kids in s.children.items() if not kids and i in s.parent]
    leaves.sort(key=lambda i: (s.created[i], i))
    depth: dict[int, int] = {}  # messages on an earlier branch: their place on it (root = 1)
    root_of: dict[int, int] = {}
    branch_of: dict[int, int] = {}  # the leaf of the first branch through each message
    last_fork: dict[int, int | None] = {}  # the last fork above each message (itself excluded)
    out = []
    for leaf in leaves:
        tail, seen = [leaf], {leaf}
        while (up := s.parent.get(tail[-1])) is not None and up in s.parent and up not in depth and up not in seen:
            tail.append(up)
            seen.add(up)
        tail.reverse()
        joins = s.parent.get(tail[0])
        joins = joins if joins in depth else None
        fork = None if joins is None else (joins if len(s.children.get(joins, [])) > 1 else last_fork[joins])
        base = 0 if joins is None else depth[joins]
        root = tail[0] if joins is None else root_of[joins]
        for place, node in enumerate(tail, start=1):
            depth[node], root_of[node], branch_of[node], last_fork[node] = base + place, root, leaf, fork
            if len(s.children.get(node, [])) > 1:
                fork = node
        out.append(
            _Branch(
                leaf=leaf,
                root=root,
                fork=last_fork[leaf],
                joins=joins,
                joins_branch=None if joins is None else branch_of[joins],
                length=depth[leaf],
                tail=tail,
            )
        )
    return out


def branches_list(*, layer: Layer, offset: int = 0, limit: int = BRANCHES_PAGE) -> dict[str, Any]:
    """One page of the layer's branches (root → leaf paths), newest leaf last, with the conversation's
    roots and forks. A branch gives its `tail`, the messages no earlier branch holds, and `joins`,
    the message of `joins_branch` it continues from (None for a branch from a new root): every
    message is listed once in the whole answer; a branch's whole path is `GET /items/{leaf}/thread/`."""
    s = skeleton(layer_id=layer.pk)
    every = _branches(s)
    page = every[offset : offset + limit]
    previews = {m["id"]: m for m in messages_by_id(ids=[b.leaf for b in page])}
    branches = []
    for b in page:
        m = previews[b.leaf]
        branches.append(
            {
                "leaf": b.leaf,
                "root": b.root,
                "fork": b.fork,
                "length": b.length,
                "joins": b.joins,
                "joins_branch": b.joins_branch,
                "tail": b.tail,
                "last_at": m["created_at"],
                "preview": (m["title"] or m["content"])[:120],
            }
        )
    fork_rows = [{"id": i, "children": kids} for i, kids in s.children.items() if len(kids) > 1]
    return {
        "layer": layer.pk,
        "messages": len(s.parent),
        "roots": s.roots,
        "forks": fork_rows,
        "count": len(every),
        "offset": offset,
        "limit": limit,
        "branches": branches,
    }


def thread_of(*, item: Item) -> dict[str, Any]:
    """The thread through a message: root → message, then onwards along the earliest child at each
    fork; every fork on the way lists its other children, to follow them with another call."""
    s = skeleton(layer_id=item.layer_id)
    path = _path_to(s, item.pk)
    node = item.pk
    while s.children.get(node):
        node = s.children[node][0]
        path.append(node)
    forks = [{"id": n, "children": s.children[n]} for n in path if len(s.children.get(n, [])) > 1]
    messages = messages_by_id(ids=path)
    for m in messages:
        m["children"] = s.children.get(m["id"], [])
    return {"item": item.pk, "layer": item.layer_id, "messages": messages, "forks": forks}


def communities_list(*, layer: Layer) -> QuerySet[Community]:
    return Community.objects.filter(layer=layer).order_by("kind", "first_at", "key")


def community_members(*, communities: list[Community]) -> dict[int, list[int]]:
    """Member ids per community, in time order (one query)."""
    out: dict[int, list[int]] = {c.pk: [] for c in communities}
    rows = Community.members.through.objects.filter(community__in=communities).order_by("item__created_at", "item_id")
    for community_id, item_id in rows.values_list("community_id", "item_id"):
        out[community_id].append(item_id)
    return out


def graph_state_get(*, layer: Layer) -> GraphState | None:
    """What the layer's communities were last computed from (None: never computed)."""
    return GraphState.objects.filter(layer=layer).first()


def communities_of_layers(*, workspace_id: int, layer_ids: Iterable[int]) -> list[Community]:
    """The communities of these layers of the workspace (one query)."""
    return list(Community.objects.filter(workspace_id=workspace_id, layer_id__in=list(layer_ids)))


def community_texts(*, workspace_id: int, community_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """(title, summary) of each of these communities of the workspace that still exists, by id (one query)."""
    rows = Community.objects.filter(workspace_id=workspace_id, pk__in=list(community_ids)).values_list(
        "id", "title", "summary"
    )
    return {community_id: (title, summary) for community_id, title, summary in rows}


def communities_of_members(
    *, workspace_id: int, community_ids: Iterable[int], item_ids: Iterable[int]
) -> dict[int, list[int]]:
    """For each of these items, which of these communities of the workspace it is a member of (one query)."""
    out: dict[int, list[int]] = {}
    rows = Community.members.through.objects.filter(
        community__workspace_id=workspace_id, community_id__in=list(community_ids), item_id__in=list(item_ids)
    ).order_by("community_id")
    for community_id, item_id in rows.values_list("community_id", "item_id"):
        out.setdefault(item_id, []).append(community_id)
    return out


def message_rungs(*, item_hashes: dict[int, str]) -> dict[int, tuple[str, str]]:
    """(summary, title) the LLM wrote of each of these messages' current text, by item id (one query;
    none without an LLM configured: apps/conversations/message_summaries.py)."""
    if settings.SUMMARY_PROVIDER != "llm" or not item_hashes:
        return {}
    rows = MessageSummary.objects.filter(item_id__in=list(item_hashes), note="").values_list(
        "item_id", "content_hash", "summary", "title"
    )
    return {i: (summary, title) for i, digest, summary, title in rows if item_hashes.get(i) == digest}
