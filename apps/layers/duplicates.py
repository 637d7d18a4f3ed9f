"""Repeated items: a write that repeats an item of its layer is merged into it instead of stored twice.

Two ways an item repeats another, both within one layer and between items of the same kind, type and
group (a package for another group is another package; messages are turns of a conversation, never
merged: saying "ok" twice is two turns):
- exactly: the same content hash (title and content), found on write, synchronously (`merge_plan`);
- nearly: once the new item is embedded, an older item's vector is at least `DUPLICATE_SIMILARITY`
  (cosine) from its own and both texts carry the same figures (numbers, dates, versions: "kept 35
  days" and "kept 90 days" are 0.94 apart in e5 and are not the same fact). Run by the background
  embedder after its write-back (`near_duplicates_merge`); the new item is folded into the older one.

A merge keeps the older item and adds the repeat's count (`seen_count`), its source refs, task ids and
agent types, its external id (in `merged_external_ids`), the higher importance and the higher priority
(a repeat that says "critical" does not lose it to the stored "low"). A writer that wants
both asks `on_duplicate: "keep"` (`Item.mergeable` false: never merged, exactly or nearly).
Superseded items take no merges: a fact stated again after it was replaced is stored anew.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F

from apps.core.versions import content_changed
from apps.layers.models import Item, ItemKind, Layer, Priority

# Cosine similarity at or above which two items of one layer, kind and type are the same statement
# (multilingual-e5-small: a paraphrase such as "Backups of the database are retained for 35 days" for
# "Database backups are kept for 35 days" is 0.987, "Alice lives in Paris" / "Bob lives in Paris" 0.955).
DUPLICATE_SIMILARITY = 0.985
ON_DUPLICATE = ("merge", "keep")
_FIGURE = re.compile(r"\w*\d[\w.,:/-]*")


def figures(text: str) -> list[str]:
    """The tokens of `text` that carry a digit, in order: two texts with other figures say other things."""
    return sorted(m.group(0).rstrip(".,:") for m in _FIGURE.finditer(text))


def mergeable_kind(kind: str) -> bool:
    return kind != ItemKind.MESSAGE


@dataclass(frozen=True)
class MergePlan:
    """Where each built item of a write goes: merged into a stored item, into the first item of the
    batch it repeats, or (in neither mapping) created."""

    into_existing: dict[int, Item]  # index in the batch → the stored item it repeats
    into_batch: dict[int, int]  # index → the index of the first item of the batch it repeats


def _key(item: Item) -> tuple[str, str, str, str]:
    return (item.kind, item.type, item.content_hash, item.group_id)


def merge_plan(*, layer: Layer, items: Sequence[Item], mergeable: Sequence[bool]) -> MergePlan:
    """Which of the `items` (built, not saved) repeat a stored item of `layer` or an earlier one of the
    batch exactly (one query)."""
    keys = {_key(item) for item, merge in zip(items, mergeable, strict=True) if merge and mergeable_kind(item.kind)}
    stored: dict[tuple[str, str, str, str], Item] = {}
    if keys:
        found = Item.objects.filter(
            layer=layer,
            content_hash__in=[key[2] for key in keys],
            mergeable=True,
            superseded_by__isnull=True,
        ).order_by("id")
        for item in found:
            stored.setdefault(_key(item), item)
    into_existing: dict[int, Item] = {}
    into_batch: dict[int, int] = {}
    first: dict[tuple[str, str, str, str], int] = {}
    for index, (item, merge) in enumerate(zip(items, mergeable, strict=True)):
        key = _key(item)
        if not merge or key not in keys:
            continue
        if key in stored:
            into_existing[index] = stored[key]
        elif key in first:
            into_batch[index] = first[key]
        else:
            first[key] = index
    return MergePlan(into_existing=into_existing, into_batch=into_batch)


def _union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


# Lowest first: "" (none given), then the Priority levels.
_PRIORITY_ORDER = ("", Priority.LOW, Priority.MEDIUM, Priority.HIGH, Priority.CRITICAL)


def merge_into(*, kept: Item, repeats: Sequence[Item]) -> Item:
    """Fold `repeats` (saved or not) into `kept` and save it: counts, sources, external ids, importance.

    The count moves in one UPDATE with an F expression, so concurrent merges into one item add up."""
    if not repeats:
        return kept
    added = sum(max(item.seen_count or 1, 1) for item in repeats)
    for item in repeats:
        kept.source_refs = _union(kept.source_refs, item.source_refs)
        kept.task_ids = _union(kept.task_ids, item.task_ids)
        kept.agent_types = _union(kept.agent_types, item.agent_types)
        kept.merged_external_ids = _union(
            kept.merged_external_ids, [x for x in (item.external_id, *item.merged_external_ids) if x]
        )
        kept.importance = max(kept.importance, item.importance)
        kept.priority = max(kept.priority, item.priority, key=_PRIORITY_ORDER.index)
        kept.pinned = kept.pinned or item.pinned
    fields = ["source_refs", "task_ids", "agent_types", "merged_external_ids", "importance", "priority", "pinned"]
    Item.objects.filter(pk=kept.pk).update(seen_count=F("seen_count") + added, **{f: getattr(kept, f) for f in fields})
    kept.refresh_from_db(fields=["seen_count", "updated_at"])
    content_changed(kept.workspace_id)
    return kept


# Per item just embedded: its nearest older item of the same layer, kind, type and group that may take a
# merge, and its nearest newer one that may be merged into it, each as (new id, old id, similarity).
# Both sides, because vectors are not stored in the items' order: concurrent embedding runners (and a
# backlog embedded newest first) store a repeat's vector before the older item's, and the older
# item's turn must still find it.
_NEAREST_SQL = """
SELECT n.id, o.id, 1 - (o.embedding <=> n.embedding)
FROM layers_item n CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM layers_item o
    WHERE o.layer_id = n.layer_id AND o.kind = n.kind AND o.type = n.type AND o.group_id = n.group_id
      AND o.id < n.id
      AND o.embedding IS NOT NULL AND o.mergeable AND o.superseded_by_id IS NULL
    ORDER BY o.embedding <=> n.embedding LIMIT 1
) o
WHERE n.id = ANY(%(ids)s::bigint[]) AND n.embedding IS NOT NULL AND n.kind <> 'message'
UNION ALL
SELECT o.id, n.id, 1 - (o.embedding <=> n.embedding)
FROM layers_item n CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM layers_item o
    WHERE o.layer_id = n.layer_id AND o.kind = n.kind AND o.type = n.type AND o.group_id = n.group_id
      AND o.id > n.id AND NOT o.id = ANY(%(ids)s::bigint[])
      AND o.embedding IS NOT NULL AND o.mergeable AND o.superseded_by_id IS NULL
    ORDER BY o.embedding <=> n.embedding LIMIT 1
) o
WHERE n.id = ANY(%(ids)s::bigint[]) AND n.embedding IS NOT NULL AND n.kind <> 'message'
  AND n.mergeable AND n.superseded_by_id IS NULL
"""


def near_pairs(ids: Sequence[int]) -> list[tuple[int, int, float]]:
    """(newer id, older id, cosine similarity): for each of `ids`, its nearest older item and its nearest
    newer one embedded before it (pgvector only); oldest pairs first."""
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_NEAREST_SQL, {"ids": list(ids)})
        rows = [(new, old, float(similarity)) for new, old, similarity in cursor.fetchall()]
    return sorted(rows, key=lambda row: (row[1], row[0]))


def near_duplicates_merge(*, pairs: Sequence[tuple[int, int, float]]) -> list[tuple[int, int]]:
    """Fold each new item of `pairs` into its nearest older one where they are near duplicates
    (`DUPLICATE_SIMILARITY`, the same figures, both mergeable); returns the (merged, kept) ids."""
    close = [(new, old) for new, old, similarity in pairs if similarity >= DUPLICATE_SIMILARITY]
    if not close:
        return []
    rows = Item.objects.in_bulk({i for pair in close for i in pair})
    merged: list[tuple[int, int]] = []
    for new_id, old_id in close:
        new, old = rows.get(new_id), rows.get(old_id)
        if new is None or old is None or not new.mergeable or new.superseded_by_id is not None:
            continue
        if figures(f"{new.title}\n{new.content}") != figures(f"{old.title}\n{old.content}"):
            continue
        with transaction.atomic():
            # Whatever the repeat superseded, the kept item supersedes now; then the repeat goes.
            Item.objects.filter(superseded_by_id=new_id).exclude(pk=old_id).update(superseded_by_id=old_id)
            if (
                not Item.objects.filter(pk=new_id, mergeable=True).exists()
                or not Item.objects.filter(pk=old_id).exists()
            ):
                continue  # merged away by an earlier pair of this batch (or deleted meanwhile)
            merge_into(kept=old, repeats=[new])
            Item.objects.filter(pk=new_id).delete()
        merged.append((new_id, old_id))
    return merged
