"""Writes of the conversation graph: user-marked importance and access counts."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from django.db import connection, transaction

from apps.conversations.importance import USER_IMPORTANCE
from apps.core.db_health import classify
from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_KIND
from apps.core.isolation import isolated
from apps.core.versions import content_changed
from apps.layers.models import Item, ItemKind


@transaction.atomic
def message_mark_important(*, item: Item, important: bool) -> Item:
    """Mark a message important (importance 1.0, kept at full detail) or take the mark back.

    Unmarking returns to the default importance, or to the decision level if the message states one.
    """
    if item.kind != ItemKind.MESSAGE:
        raise InvalidInput("only messages are marked important", code=INVALID_KIND)
    from apps.conversations.importance import automatic_importance

    metadata = dict(item.metadata) if isinstance(item.metadata, dict) else {}  # not an object: written around the API
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


# access_count is a PostgreSQL integer: counts saturate here instead of overflowing the flush.
MAX_ACCESS_COUNT = 2**31 - 1

_RECORD_ACCESS_SQL = (
    "INSERT INTO layers_itemaccess (item_id, access_count, last_accessed_at) "
    "SELECT v.id, v.n, %s FROM unnest(%s::bigint[], %s::int[]) AS v(id, n) "
    # deleted meanwhile; the key-share lock keeps a delete that is under way from committing in between
    "WHERE EXISTS (SELECT 1 FROM layers_item i WHERE i.id = v.id FOR KEY SHARE) "
    "ON CONFLICT (item_id) DO UPDATE "
    f"SET access_count = LEAST(layers_itemaccess.access_count::bigint + EXCLUDED.access_count, {MAX_ACCESS_COUNT}), "
    "last_accessed_at = GREATEST(layers_itemaccess.last_accessed_at, EXCLUDED.last_accessed_at)"
)


def items_record_access(*, counts: dict[int, int], at: datetime) -> int:
    """Add `counts` to the items' access counts and move their last access to `at`, in one upsert.

    The flush is shared by every workspace of the process: a count saturates at MAX_ACCESS_COUNT
    rather than overflow, and should the batch still fail, each item is written on its own, so one
    bad row never loses the others' counts."""
    if not counts:
        return 0
    ids = sorted(counts)
    values = [min(counts[i], MAX_ACCESS_COUNT) for i in ids]
    written, error = isolated(lambda: _record(at, ids, values), what=f"recording {len(ids)} item accesses")
    if error is None:
        return written or 0
    if classify(error) == "timeout":  # a lock or statement timeout holds for every row alike: no retries
        return 0
    total = 0
    for item_id, n in zip(ids, values, strict=True):  # one by one: only the bad row is lost
        one, _ = isolated(partial(_record, at, [item_id], [n]), what=f"item {item_id}'s access count (+{n})")
        total += one or 0
    return total


def _record(at: datetime, ids: list[int], values: list[int]) -> int:
    with connection.cursor() as cur:
        cur.execute(_RECORD_ACCESS_SQL, [at, ids, values])
        return cur.rowcount
