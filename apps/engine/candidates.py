"""The one way to make a `Candidate` from an item row or a community, with where it came from.

Assembly's retrieval (search hits, pinned items, the conversation window, neighbouring turns,
related items), the community source, the history tool and the conversation-graph page all build
their candidates here, so a field added to `Candidate` is filled in one place. Pure: a row is the
mapping `.values(*ITEM_FIELDS)` returns (missing optional fields take the model's defaults), a
community anything with the attributes of `conversations.Community`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from apps.engine.types import Candidate, Rung

# The item fields a candidate is made of (`Item.objects.values(*ITEM_FIELDS)`).
ITEM_FIELDS = (
    "id",
    "kind",
    "type",
    "layer_id",
    "title",
    "content",
    "external_id",
    "created_at",
    "pinned",
    "importance",
    "confidence",
    "priority",
    "group_id",
    "agent_types",
    "helpfulness",
    "role",
    "metadata",
    "superseded_by_id",
)

# Where a candidate came from (the trace's `origin`).
ORIGINS = (
    "vector",  # the vector search found it
    "keyword",  # the keyword search found it
    "both",  # both searches found it
    "pinned",  # a pinned item, found by neither search
    "hint",  # an error-pattern hint
    "summary",  # a layer summary
    "community",  # a conversation community's summary, standing in for its far-away members
    "related",  # reached along relationships from a hit
    "conversation",  # the conversation window (or a message asked for by task or id)
    "neighbour",  # a turn said next to a message hit, or its parent or reply
)


def search_origin(*, vector_rank: int | None, keyword_rank: int | None, pinned: bool = False) -> str:
    """The origin of an item from the searches' ranks: vector, keyword, both, or pinned when neither."""
    if vector_rank is not None and keyword_rank is not None:
        return "both"
    if vector_rank is not None:
        return "vector"
    if keyword_rank is not None:
        return "keyword"
    return "pinned" if pinned else "conversation"


def item_row(fields: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """The row mapping of a raw-SQL tuple selecting `fields` (a raw cursor returns jsonb as text)."""
    row = dict(zip(fields, values, strict=False))
    metadata = row.get("metadata")
    if isinstance(metadata, str):
        row["metadata"] = {} if metadata == "{}" else json.loads(metadata)  # most items carry none
    return row


def stored_summary(metadata: Any) -> str | None:
    """The summary an item's writer stored in its metadata (`{"summary": "..."}`), if it is a string.

    The only key of user metadata the engine uses, read here once, as a typed field: any other
    value, shape or key leaves the candidate as if the metadata were empty."""
    if isinstance(metadata, dict):
        summary = metadata.get("summary")
        if isinstance(summary, str) and summary:
            return summary
    return None


def item_candidate(row: Mapping[str, Any], *, layer_name: str, origin: str, **signals: Any) -> Candidate:
    """The candidate of an item row; `signals` are further `Candidate` fields (search ranks, distance,
    the engine's marks such as `neighbour_of`). The row's metadata is carried, never interpreted
    (but for `stored_summary`)."""
    metadata = row.get("metadata") or {}
    return Candidate(
        id=row["id"],
        kind=row.get("kind", "message"),
        type=row.get("type", ""),
        layer_id=row["layer_id"],
        layer_name=layer_name,
        content=row["content"],
        created_at=row["created_at"],
        title=row.get("title", ""),
        external_id=row.get("external_id"),
        pinned=row.get("pinned", False),
        importance=row.get("importance", 0.5),
        confidence=row.get("confidence"),
        priority=row.get("priority", ""),
        group_id=row.get("group_id", ""),
        agent_types=tuple(row.get("agent_types") or ()),
        helpfulness=row.get("helpfulness", 0.5),
        role=row.get("role", ""),
        metadata=metadata,
        summary=stored_summary(metadata),
        superseded_by=row.get("superseded_by_id"),
        origin=origin,
        **signals,
    )


class CommunityLike(Protocol):
    pk: Any
    kind: str
    key: str
    layer_id: int
    title: str
    summary: str
    last_at: datetime


def community_candidate(community: CommunityLike, *, layer_name: str, **signals: Any) -> Candidate:
    """The candidate of a conversation community: its summary, then its title, as the ladder."""
    return Candidate(
        id=community.pk,
        source="community",
        kind="community",
        type=community.kind,
        layer_id=community.layer_id,
        layer_name=layer_name,
        content=community.summary,
        title=community.title,
        created_at=community.last_at,
        rungs=(Rung("full", community.summary), Rung("title", community.title)),
        origin="community",
        **signals,
    )
