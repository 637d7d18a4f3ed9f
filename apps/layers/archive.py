"""The layers app's parts of a workspace archive: layers, items and relationships (apps/core/archive).

Rows keep their source ids (`id`, `parent`, `layer`, `source`, `target`); a restore maps them to the
ids their copies get, keeps external ids, and maps the archived company layer onto the target's own
root. Item vectors travel only with `?embeddings=1` and are kept when the target embeds with the
same model; other items wait for the background embedder, as after any write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from apps.core import background
from apps.core.archive.parts import ArchivePart, ExportScope, RestoreScope, Row, RowError, batched, register
from apps.layers.models import KIND_RANK, Item, ItemKind, Layer, LayerKind, Relationship

BATCH = 1000
LAYER_FIELDS = ("id", "kind", "name", "parent_id", "external_id", "created_at", "updated_at")
ITEM_FIELDS = (
    "id",
    "layer_id",
    "kind",
    "type",
    "title",
    "content",
    "external_id",
    "token_count",
    "content_hash",
    "importance",
    "pinned",
    "metadata",
    "created_at",
    "role",
    "parent_id",
    "task_ids",
    "helpfulness",
    "confidence",
    "priority",
    "group_id",
    "agent_types",
    "source_refs",
    "seen_count",
    "merged_external_ids",
    "mergeable",
    "superseded_by_id",
)
# Copied as they are (references and vectors are mapped apart).
ITEM_VALUES = tuple(f for f in ITEM_FIELDS if f not in {"id", "layer_id", "parent_id", "superseded_by_id"})
# Fields an archive written before them lacks: restored with the model's default.
ITEM_DEFAULTS: dict[str, Any] = {"seen_count": 1, "merged_external_ids": [], "mergeable": True}


REFERENCES = {
    "parent_id": "parent",
    "layer_id": "layer",
    "source_id": "source",
    "target_id": "target",
    "superseded_by_id": "superseded_by",
}


def _renamed(row: dict[str, Any]) -> Row:
    """`parent_id` → `parent`, ...: the archive names references by the field's name."""
    return {REFERENCES.get(key, key): value for key, value in row.items()}


def layers_export(scope: ExportScope) -> Iterable[Row]:
    rows = Layer.objects.filter(workspace_id=scope.workspace_id).order_by("id").values(*LAYER_FIELDS)
    return (_renamed(row) for row in rows.iterator(chunk_size=2000))


def layers_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    """The company row updates the target's root; the others are created a level at a time, parents first."""
    root = Layer.objects.get(workspace_id=scope.workspace_id, kind=LayerKind.COMPANY)
    levels: dict[int, list[Row]] = {}
    times: list[tuple[int, datetime | str]] = []
    for row in rows:
        if row["kind"] not in KIND_RANK:
            raise RowError(f"unknown layer kind {row['kind']!r}")
        if row["kind"] == LayerKind.COMPANY:
            if times:
                raise RowError("a second company layer")
            Layer.objects.filter(pk=root.pk).update(name=row["name"], external_id=row["external_id"])
            scope.ids.put("layer", row["id"], root.pk)
            times.append((root.pk, row["created_at"]))
            continue
        levels.setdefault(KIND_RANK[row["kind"]], []).append(row)
    count = len(times)
    for rank in sorted(levels):
        for batch in batched(iter(levels[rank]), BATCH):
            built = []
            for row in batch:
                parent = scope.ids.get("layer", row["parent"])
                built.append(
                    Layer(
                        workspace_id=scope.workspace_id,
                        kind=row["kind"],
                        name=row["name"],
                        parent_id=parent,
                        external_id=row["external_id"],
                    )
                )
            _check_parents(built)
            for row, layer in zip(batch, Layer.objects.bulk_create(built), strict=True):
                scope.ids.put("layer", row["id"], layer.pk)
                times.append((layer.pk, row["created_at"]))
            count += len(built)
    _times_restore("layers_layer", times)
    return count


def _check_parents(built: list[Layer]) -> None:
    parents = {layer.parent_id for layer in built if layer.parent_id is not None}
    ranks = dict(Layer.objects.filter(pk__in=parents).values_list("pk", "kind"))
    for layer in built:
        parent = ranks.get(layer.parent_id or 0)
        if parent is None or KIND_RANK[parent] >= KIND_RANK[layer.kind]:
            raise RowError(f"a {layer.kind} layer under a {parent or 'missing'} layer")


def _times_restore(table: str, times: list[tuple[int, datetime | str]]) -> None:
    """Put back the creation times that `auto_now_add` replaced (one statement per 10,000 rows)."""
    for start in range(0, len(times), 10_000):
        chunk = times[start : start + 10_000]
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} AS t SET created_at = v.at FROM unnest(%s::bigint[], %s::timestamptz[]) AS v(id, at) "
                "WHERE t.id = v.id",
                [[pk for pk, _ in chunk], [at for _, at in chunk]],
            )


def items_export(scope: ExportScope) -> Iterable[Row]:
    fields = (*ITEM_FIELDS, "embedding", "embedding_model") if scope.embeddings else ITEM_FIELDS
    rows = Item.objects.filter(workspace_id=scope.workspace_id).order_by("id").values(*fields)
    return (_renamed(row) for row in rows.iterator(chunk_size=1000))


def _vector(scope: RestoreScope, row: Row) -> tuple[np.ndarray | None, str]:
    vector = row.get("embedding") if scope.embeddings else None
    if vector is None or row.get("embedding_model") != scope.embedding_model:
        return None, ""  # another model's vector: embedded again here
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (settings.EMBEDDING_DIMENSIONS,) or not np.isfinite(array).all():
        raise RowError(f"the embedding is not {settings.EMBEDDING_DIMENSIONS} finite numbers")
    return array, row["embedding_model"]


def items_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    """Items in their source order (so ids keep their order); parents named before their child are
    linked at once, the others after every item exists."""
    count, later, pending = 0, [], False
    replaced: list[tuple[int, int]] = []  # (new id, the archive's id of the item that supersedes it)
    known = scope.ids.ids.setdefault("item", {})
    for batch in batched(rows, BATCH):
        built = []
        for row in batch:
            if row["kind"] not in ItemKind.values:
                raise RowError(f"unknown item kind {row['kind']!r}")
            embedding, model = _vector(scope, row)
            pending = pending or embedding is None
            parent = row["parent"]
            built.append(
                Item(
                    workspace_id=scope.workspace_id,
                    layer_id=scope.ids.get("layer", row["layer"]),
                    parent_id=known.get(parent) if parent is not None else None,
                    embedding=embedding,
                    embedding_model=model,
                    **{name: row[name] if name in row else ITEM_DEFAULTS[name] for name in ITEM_VALUES},
                )
            )
        for row, item in zip(batch, Item.objects.bulk_create(built), strict=True):
            known[row["id"]] = item.pk
            if row["parent"] is not None and item.parent_id is None:
                later.append((item.pk, row["parent"]))
            if row.get("superseded_by") is not None:
                replaced.append((item.pk, row["superseded_by"]))
        count += len(built)
    for column, pairs in (("parent_id", later), ("superseded_by_id", replaced)):
        links = [(pk, scope.ids.get("item", other)) for pk, other in pairs]
        for start in range(0, len(links), 10_000):
            chunk = links[start : start + 10_000]
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE layers_item AS t SET {column} = v.other "
                    "FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, other) WHERE t.id = v.id",
                    [[pk for pk, _ in chunk], [other for _, other in chunk]],
                )
    if pending:
        from apps.layers.tasks import embed_pending_items

        background.enqueue(embed_pending_items, None)
    return count


def relationships_export(scope: ExportScope) -> Iterable[Row]:
    fields = ("id", "source_id", "target_id", "kind", "weight", "created_at")
    rows = Relationship.objects.filter(workspace_id=scope.workspace_id).order_by("id").values(*fields)
    return (_renamed(row) for row in rows.iterator(chunk_size=2000))


def relationships_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
    for batch in batched(rows, BATCH):
        built = [
            Relationship(
                workspace_id=scope.workspace_id,
                source_id=scope.ids.get("item", row["source"]),
                target_id=scope.ids.get("item", row["target"]),
                kind=row["kind"],
                weight=row["weight"],
            )
            for row in batch
        ]
        Relationship.objects.bulk_create(built)
        count += len(built)
    return count


def _holds_content(workspace_id: int) -> bool:
    layers = Layer.objects.filter(workspace_id=workspace_id).exclude(kind=LayerKind.COMPANY)
    return layers.exists() or Item.objects.filter(workspace_id=workspace_id).exists()


def _nothing(workspace_id: int) -> bool:
    return False  # items and relationships: a workspace holding any is occupied through `layers`


def register_parts() -> None:
    register(
        ArchivePart(
            name="layers",
            order=10,
            export=layers_export,
            restore=layers_restore,
            occupied=_holds_content,
            count=lambda s: Layer.objects.filter(workspace_id=s.workspace_id).count(),
        ),
        ArchivePart(
            name="items",
            order=20,
            export=items_export,
            restore=items_restore,
            occupied=_nothing,
            count=lambda s: Item.objects.filter(workspace_id=s.workspace_id).count(),
        ),
        ArchivePart(
            name="relationships",
            order=30,
            export=relationships_export,
            restore=relationships_restore,
            occupied=_nothing,
            count=lambda s: Relationship.objects.filter(workspace_id=s.workspace_id).count(),
        ),
    )
