"""Writes of the conversation graph: user-marked importance and access counts."""

from __future__ import annotations

from datetime import datetime

from django.db import connection, transaction

from apps.conversations.importance import USER_IMPORTANCE
from apps.core.errors import InvalidInput
from apps.core.versions import content_changed
from apps.layers.models import Item, ItemKind


@transaction.atomic
def message_mark_important(*, item: Item, important: bool) -> Item:
    """Mark a message important (importance 1.0, kept at full detail) or take the mark back.

    Unmarking returns to the default importance, or to the decision level if the message states one.
    """
    if item.kind != ItemKind.MESSAGE:
        raise InvalidInput("only messages are marked important", code="invalid_kind")
    from apps.conversations.importance import automatic_importance

    metadata = dict(item.metadata or {})
    if important:
        item.importance = USER_IMPORTANCE
        metadata["importance_source"] = "user"
    else:
        item.importance, reason = automatic_importance(content=item.content, title=item.title, importance=0.5)
        metadata.pop("importance_source", None)
        if reason:
            metadata["importance_source"] = reason
    item.metadata = metadata
    item.save(update_fields=["importance", "metadata", "updated_at"])
    content_changed(item.workspace_id)  # importance changes what assembly keeps
    return item


def items_record_access(*, counts: dict[int, int], at: datetime) -> int:
    """Add `counts` to the items' access counts and move their last access to `at`, in one upsert."""
    if not counts:
        return 0
    ids = sorted(counts)
    with connection.cursor() as cur:
        cur.execute(
            "INSERT INTO layers_itemaccess (item_id, access_count, last_accessed_at) "
            "SELECT v.id, v.n, %s FROM unnest(%s::bigint[], %s::int[]) AS v(id, n) "
            "WHERE EXISTS (SELECT 1 FROM layers_item i WHERE i.id = v.id) "  # deleted meanwhile
            "ON CONFLICT (item_id) DO UPDATE "
            "SET access_count = layers_itemaccess.access_count + EXCLUDED.access_count, "
            "last_accessed_at = GREATEST(layers_itemaccess.last_accessed_at, EXCLUDED.last_accessed_at)",
            [at, ids, [counts[i] for i in ids]],
        )
        return cur.rowcount
