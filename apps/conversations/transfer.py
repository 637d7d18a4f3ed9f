"""Export and import of a session's conversation graph: messages, links, summaries, communities.

The JSON names messages by `ref` ("m1", "m2", ... in time order), never by database id, so an
export imported into a new session exports again equal (apart from the layer's own fields).
Embeddings are not exported: the importing service embeds in the background, as for any write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.conversations.communities import communities_replace
from apps.conversations.models import Community, ItemAccess
from apps.conversations.selectors import community_members
from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_GRAPH
from apps.core.tokenizer import count_tokens, encoding_for_model
from apps.layers import services as layer_services
from apps.layers.models import Item, ItemKind, Layer
from apps.summaries.models import DEPTH_TOKEN_LIMITS
from apps.summaries.restore import summaries_of, summaries_restore
from apps.workspaces.models import Workspace

FORMAT = "contextarch.conversation"
VERSION = 1
MESSAGE_FIELDS = ("role", "title", "content", "external_id", "task_ids", "importance", "pinned", "metadata")


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
    summaries = [{**row, "generated_at": _iso(row["generated_at"])} for row in summaries_of(layer=layer)]
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


def _check_messages(messages: list[dict[str, Any]]) -> set[str]:
    """Refs unique, every parent a known ref, no parent cycle; the known refs.

    Linear: an iterative walk with colours visits each message once, so a long chain (tens of
    thousands of messages, one parent each) is checked in one pass instead of once per message.
    """
    refs = [m["ref"] for m in messages]
    known = set(refs)
    if len(known) != len(refs):
        raise InvalidInput("message refs must be unique", code=INVALID_GRAPH)
    parent = {m["ref"]: m.get("parent") for m in messages}
    for child, up in parent.items():
        if up is not None and up not in known:
            raise InvalidInput(f"message {child} has unknown parent {up}", code=INVALID_GRAPH)
    done: set[str] = set()  # black: its ancestor chain ends at a root
    for start in refs:
        path: list[str] = []
        on_path: set[str] = set()  # grey: on the chain being walked now
        node: str | None = start
        while node is not None and node not in done:
            if node in on_path:
                raise InvalidInput(f"message {node} is its own ancestor", code=INVALID_GRAPH)
            path.append(node)
            on_path.add(node)
            node = parent[node]
        done.update(path)
    return known


def _check_graph(graph: dict[str, Any]) -> None:
    """Everything the database constraints would otherwise refuse with a 500, as a 400 here."""
    known = _check_messages(graph["messages"])
    depths = [s["depth"] for s in graph["summaries"]]
    repeated_depth = next((d for d in depths if depths.count(d) > 1), None)
    if repeated_depth is not None:
        raise InvalidInput(f"two summaries of depth {repeated_depth}: at most one per depth", code=INVALID_GRAPH)
    for c in graph["communities"]:
        unknown = [r for r in c["members"] if r not in known]
        if unknown:
            raise InvalidInput(f"community {c['key']} has unknown member {unknown[0]}", code=INVALID_GRAPH)
        seen: set[str] = set()
        for r in c["members"]:
            if r in seen:
                raise InvalidInput(f"community {c['key']} lists member {r} twice", code=INVALID_GRAPH)
            seen.add(r)
        if c.get("first_at") and c.get("last_at") and c["first_at"] > c["last_at"]:
            raise InvalidInput(f"community {c['key']} has first_at after last_at", code=INVALID_GRAPH)
    keys = [(c["kind"], c["key"]) for c in graph["communities"]]
    if len(set(keys)) != len(keys):
        raise InvalidInput("community keys must be unique per kind", code=INVALID_GRAPH)


def _counted_summaries(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summaries with token_count recounted by the real tokenizer (as apps/summaries counts),
    each within its depth's limit: a client's count is never trusted."""
    encoding = encoding_for_model(settings.DEFAULT_MODEL).encoding
    out = []
    for s in summaries:
        tokens = count_tokens(s["text"], encoding)
        limit = DEPTH_TOKEN_LIMITS[s["depth"]]
        if tokens > limit:
            raise InvalidInput(
                f"the {s['depth']} summary has {tokens} tokens; at most {limit}",
                code=INVALID_GRAPH,
                details={"depth": s["depth"], "tokens": tokens, "limit": limit},
            )
        out.append({**s, "token_count": tokens})
    return out


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
    summaries = _counted_summaries(graph["summaries"])
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
    _restore_links(layer, graph["messages"], ids)
    summaries_restore(layer=layer, summaries=summaries)
    groups = [
        {**{k: v for k, v in c.items() if k != "members"}, "members": [ids[r] for r in c["members"]]}
        for c in graph["communities"]
    ]
    communities_replace(layer=layer, groups=groups, now=timezone.now())
    return layer


def _restore_links(layer: Layer, messages: list[dict[str, Any]], ids: dict[str, int]) -> None:
    """Parents and importance as exported (not re-derived), and the access history."""
    layer_services.messages_relink(
        layer=layer,
        links=[
            (ids[m["ref"]], ids[m["parent"]] if m.get("parent") else None, m.get("importance", 0.5)) for m in messages
        ],
    )
    ItemAccess.objects.bulk_create(
        ItemAccess(
            item_id=ids[m["ref"]], access_count=m.get("access_count", 0), last_accessed_at=m.get("last_accessed_at")
        )
        for m in messages
        if m.get("access_count") or m.get("last_accessed_at")
    )
