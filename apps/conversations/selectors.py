"""Reads of the conversation graph: branches of a session, the thread through a message, communities.

Parent links define the tree: a message without a parent starts a thread; a message with two
or more children is a fork. One query loads a layer's (id, parent, time) skeleton; the messages
shown are loaded by id in a second query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from apps.conversations.models import Community
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


def branches_list(*, layer: Layer) -> dict[str, Any]:
    """Every branch (root → leaf path) of the layer's conversation, newest leaf last."""
    s = skeleton(layer_id=layer.pk)
    leaves = [i for i, kids in s.children.items() if not kids and i in s.parent]
    leaves.sort(key=lambda i: (s.created[i], i))
    branches = []
    for leaf in leaves:
        path = _path_to(s, leaf)
        forks = [node for node in path[:-1] if len(s.children.get(node, [])) > 1]
        branches.append(
            {"leaf": leaf, "root": path[0], "fork": forks[-1] if forks else None, "length": len(path), "ids": path}
        )
    previews = {m["id"]: m for m in messages_by_id(ids=leaves)}
    for b in branches:
        m = previews[b["leaf"]]
        b["last_at"] = m["created_at"]
        b["preview"] = (m["title"] or m["content"])[:120]
    fork_rows = [{"id": i, "children": kids} for i, kids in s.children.items() if len(kids) > 1]
    return {"layer": layer.pk, "messages": len(s.parent), "roots": s.roots, "forks": fork_rows, "branches": branches}


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
