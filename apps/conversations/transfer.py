"""Export and import of a session's conversation graph: messages, links, summaries, communities.

The JSON names messages by `ref` ("m1", "m2", ... in time order), never by database id, so an
export imported into a new session exports again equal (apart from the layer's own fields).
Embeddings are not exported: the importing service embeds in the background, as for any write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.conversations.communities import communities_replace
from apps.conversations.models import Community
from apps.conversations.selectors import community_members
from apps.core.errors import InvalidInput
from apps.layers import services as layer_services
from apps.layers.models import Item, ItemKind, Layer
from apps.summaries.models import Summary
from apps.workspaces.models import Workspace

FORMAT = "contextarch.conversation"
VERSION = 1
MESSAGE_FIELDS = ("role", "title", "content", "external_id", "task_ids", "importance", "pinned", "metadata")
SUMMARY_FIELDS = ("depth", "text", "token_count", "source_hash", "generated_at", "provider", "stale")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def graph_export(*, layer: Layer) -> dict[str, Any]:
    """The layer's conversation graph as JSON-ready data."""
    rows = list(
        Item.objects.filter(layer=layer, kind=ItemKind.MESSAGE)
        .order_by("created_at", "id")
        .values("id", "parent_id", "created_at", "access__access_count", "access__last_accessed_at", *MESSAGE_FIELDS)
    )
    ref = {row["id"]: f"m{n}" for n, row in enumerate(rows, start=1)}
    messages = [
        {
            "ref": ref[row["id"]],
            "parent": ref.get(row["parent_id"]),
            **{name: row[name] for name in MESSAGE_FIELDS},
            "created_at": _iso(row["created_at"]),
            "access_count": row["access__access_count"] or 0,
            "last_accessed_at": _iso(row["access__last_accessed_at"]),
        }
        for row in rows
    ]
    summaries = [
        {**row, "generated_at": _iso(row["generated_at"])}
        for row in Summary.objects.filter(layer=layer, personalized_for__isnull=True)
        .order_by("depth")
        .values(*SUMMARY_FIELDS)
    ]
    communities = list(Community.objects.filter(layer=layer).order_by("kind", "key"))
    members = community_members(communities=communities)
    return {
        "format": FORMAT,
        "version": VERSION,
        "layer": {"kind": layer.kind, "name": layer.name, "external_id": layer.external_id},
        "messages": messages,
        "summaries": summaries,
        "communities": [
            {
                "kind": c.kind,
                "key": c.key,
                "title": c.title,
                "summary": c.summary,
                "summary_tokens": c.summary_tokens,
                "first_at": _iso(c.first_at),
                "last_at": _iso(c.last_at),
                "members": [ref[i] for i in members[c.pk] if i in ref],
            }
            for c in communities
        ],
    }


def _check_graph(graph: dict[str, Any]) -> None:
    """Refs unique, every parent and member a known ref, no parent cycle."""
    refs = [m["ref"] for m in graph["messages"]]
    if len(set(refs)) != len(refs):
        raise InvalidInput("message refs must be unique", code="invalid_graph")
    known = set(refs)
    parent = {m["ref"]: m.get("parent") for m in graph["messages"]}
    for child, up in parent.items():
        if up is not None and up not in known:
            raise InvalidInput(f"message {child} has unknown parent {up}", code="invalid_graph")
    for child in parent:
        seen, node = {child}, parent[child]
        while node is not None:
            if node in seen:
                raise InvalidInput(f"message {child} is its own ancestor", code="invalid_graph")
            seen.add(node)
            node = parent[node]
    for c in graph["communities"]:
        unknown = [r for r in c["members"] if r not in known]
        if unknown:
            raise InvalidInput(f"community {c['key']} has unknown member {unknown[0]}", code="invalid_graph")
    keys = [(c["kind"], c["key"]) for c in graph["communities"]]
    if len(set(keys)) != len(keys):
        raise InvalidInput("community keys must be unique per kind", code="invalid_graph")


@transaction.atomic
def graph_import(
    *,
    workspace: Workspace,
    parent: Layer,
    graph: dict[str, Any],
    name: str | None = None,
    external_id: str | None = None,
) -> Layer:
    """A new session under `parent` holding the graph (validated at the edge; refs checked here)."""
    _check_graph(graph)
    source = graph["layer"]
    layer = layer_services.layer_create(
        workspace=workspace,
        kind=source.get("kind") or "session",
        name=name or source["name"],
        parent=parent,
        external_id=external_id,
    )
    inputs = [
        layer_services.ItemInput(
            kind=ItemKind.MESSAGE, created_at=m["created_at"], **{f: m[f] for f in MESSAGE_FIELDS if f in m}
        )
        for m in graph["messages"]
    ]
    created: list[Item] = []
    for start in range(0, len(inputs), 1000):
        created += layer_services.items_create(layer=layer, items=inputs[start : start + 1000])
    ids = {m["ref"]: item.pk for m, item in zip(graph["messages"], created, strict=True)}
    _restore_links(graph["messages"], ids)
    for s in graph["summaries"]:
        Summary.objects.create(workspace=workspace, layer=layer, **s)
    groups = [
        {**{k: v for k, v in c.items() if k != "members"}, "members": [ids[r] for r in c["members"]]}
        for c in graph["communities"]
    ]
    communities_replace(layer=layer, groups=groups, now=timezone.now())
    return layer


def _restore_links(messages: list[dict[str, Any]], ids: dict[str, int]) -> None:
    """Parents, importance as exported (not re-derived) and access history, in one UPDATE."""
    if not messages:
        return
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE layers_item AS i SET parent_id = v.parent, importance = v.importance "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS v(id, parent, importance) WHERE i.id = v.id",
            [
                [ids[m["ref"]] for m in messages],
                [ids[m["parent"]] if m.get("parent") else None for m in messages],
                [m.get("importance", 0.5) for m in messages],
            ],
        )
        accessed = [m for m in messages if m.get("access_count") or m.get("last_accessed_at")]
        cur.execute(
            "INSERT INTO layers_itemaccess (item_id, access_count, last_accessed_at) "
            "SELECT * FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[])",
            [
                [ids[m["ref"]] for m in accessed],
                [m.get("access_count", 0) for m in accessed],
                [m.get("last_accessed_at") for m in accessed],
            ],
        )
