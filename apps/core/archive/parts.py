"""The registry of archive parts: what each app exports from its own tables and restores into them.

A part is a member of the archive (`<name>.jsonl`). `export` yields JSON-ready rows of one
workspace; `restore` writes rows read back into the (empty) target workspace and returns how many
it wrote; `occupied` says whether the workspace already holds rows of the part (an import is refused
then). Parts run in `order` (export and restore alike): a part may name rows of parts before it only,
through `IdMap`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings

from apps.core.stored_vectors import vector_pack, vector_unpack

Row = dict[str, Any]


class RowError(Exception):
    """A row the restore cannot write (an unknown reference, a missing or wrong field): the archive is
    refused as `archive_invalid` with the member and the row number."""


@dataclass
class IdMap:
    """Source id → new id, per kind of row ("layer", "item", "error_pattern", ...)."""

    ids: dict[str, dict[int, int]] = field(default_factory=dict)

    def put(self, kind: str, old: int, new: int) -> None:
        self.ids.setdefault(kind, {})[old] = new

    def get(self, kind: str, old: Any) -> int:
        """The new id of a row the archive named; RowError when no earlier row had that id."""
        try:
            return self.ids.get(kind, {})[old]
        except (KeyError, TypeError):
            raise RowError(f"names {kind} {old!r}, which the archive does not hold") from None

    def maybe(self, kind: str, old: Any) -> int | None:
        """As `get`, for a nullable reference: None stays None."""
        return None if old is None else self.get(kind, old)

    def kept(self, kind: str, olds: Any) -> list[int]:
        """The new ids of a list of references, in its order, leaving out those no earlier row had: a list
        of ids may name rows deleted since (a profile's excluded items), which matched nothing anyway."""
        if olds is None:
            return []
        if not isinstance(olds, list):
            raise RowError(f"a list of {kind} ids is not a list")
        known = self.ids.get(kind, {})
        return [known[old] for old in olds if isinstance(old, int) and old in known]


@dataclass(frozen=True)
class ExportScope:
    workspace_id: int
    embeddings: bool  # the vectors of items, summaries and communities in the archive (kB per row)


@dataclass(frozen=True)
class RestoreScope:
    workspace_id: int
    ids: IdMap
    embeddings: bool  # the archive holds vectors
    embedding_model: str  # this instance's "provider:model": vectors of another model are left out


@dataclass(frozen=True)
class ArchivePart:
    name: str
    order: int
    export: Callable[[ExportScope], Iterable[Row]]
    restore: Callable[[RestoreScope, Iterator[Row]], int]
    occupied: Callable[[int], bool]
    count: Callable[[ExportScope], int]  # the rows `export` will yield (for the progress display)


_PARTS: dict[str, ArchivePart] = {}


def register(*parts: ArchivePart) -> None:
    """Called by the owning app's `ready`; registering a name again replaces it (reloads)."""
    for part in parts:
        _PARTS[part.name] = part


def archive_parts() -> list[ArchivePart]:
    """Every registered part, in order."""
    return sorted(_PARTS.values(), key=lambda p: (p.order, p.name))


def member_name(part: ArchivePart) -> str:
    return f"{part.name}.jsonl"


def batched(rows: Iterator[Row], size: int) -> Iterator[list[Row]]:
    """Rows in lists of at most `size` (bulk inserts)."""
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def model_part(
    *,
    name: str,
    order: int,
    model: Any,
    fields: tuple[str, ...],
    references: dict[str, str] | None = None,
    id_lists: dict[str, str] | None = None,
    kind: str | None = None,
    occupied: Callable[[int], bool] | None = None,
) -> ArchivePart:
    """The part of a model with a `workspace` foreign key whose rows copy `fields` as they are.

    `references` maps a foreign key (`layer`) to the kind of row it names ("layer"), mapped on restore;
    `id_lists` maps a field of `fields` holding a list of ids (`excluded_items`) to the kind of row they
    name ("item"), mapped on restore by `IdMap.kept` (an archive written before the field restores []);
    `kind` records this model's own new ids under that kind for later parts. The owning app passes
    its own model: core names none.
    """
    references = references or {}
    id_lists = id_lists or {}
    copied = tuple(f for f in fields if f not in id_lists)
    columns = ("id", *fields, *(f"{ref}_id" for ref in references))

    def rows(workspace_id: int) -> Any:
        return model.objects.filter(workspace_id=workspace_id)

    def export(scope: ExportScope) -> Iterable[Row]:
        for row in rows(scope.workspace_id).order_by("id").values(*columns).iterator(chunk_size=2000):
            yield {**{f: row[f] for f in ("id", *fields)}, **{ref: row[f"{ref}_id"] for ref in references}}

    def restore(scope: RestoreScope, archived: Iterator[Row]) -> int:
        count = 0
        for batch in batched(archived, 1000):
            built = [
                model(
                    workspace_id=scope.workspace_id,
                    **{f: row[f] for f in copied},
                    **{f: scope.ids.kept(target, row.get(f)) for f, target in id_lists.items()},
                    **{f"{ref}_id": scope.ids.maybe(target, row[ref]) for ref, target in references.items()},
                )
                for row in batch
            ]
            created = model.objects.bulk_create(built)
            if kind is not None:
                for row, obj in zip(batch, created, strict=True):
                    scope.ids.put(kind, row["id"], obj.pk)
            count += len(built)
        return count

    return ArchivePart(
        name=name,
        order=order,
        export=export,
        restore=restore,
        occupied=occupied or (lambda workspace_id: rows(workspace_id).exists()),
        count=lambda scope: rows(scope.workspace_id).count(),
    )


def stored_vector_export(row: Row) -> Row:
    """A row of a table with a stored vector (core.stored_vectors), its bytes as a list of floats."""
    data = row.pop("embedding", None)
    vector = vector_unpack(data)
    row["embedding"] = None if vector is None else vector.tolist()
    return row


def stored_vector_restore(scope: RestoreScope, row: Row) -> dict[str, Any]:
    """The vector fields of a restored row: the archive's vector when it is of this instance's model,
    none otherwise (the row is embedded again here, as after any write)."""
    vector = row.get("embedding") if scope.embeddings else None
    if vector is None or row.get("embedding_model") != scope.embedding_model:
        return {"embedding": None, "embedding_model": ""}
    try:
        array = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):
        raise RowError(f"the embedding is not {settings.EMBEDDING_DIMENSIONS} finite numbers") from None
    if array.shape != (settings.EMBEDDING_DIMENSIONS,) or not np.isfinite(array).all():
        raise RowError(f"the embedding is not {settings.EMBEDDING_DIMENSIONS} finite numbers")
    return {"embedding": vector_pack(array), "embedding_model": row["embedding_model"]}
