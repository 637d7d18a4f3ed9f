"""The conversations app's parts of a workspace archive: communities, access counts and the LLM's
message summaries (apps/core/archive).

A community carries its members' item ids. Its graph state (what it was computed from) is not
archived: it names the source's item ids, so the periodic sweep recomputes the restored sessions'
communities once, from the same messages (deterministic: the same keys and members). A community's
vector travels with `?embeddings=1` like an item's; without it (or of another model) the restored
communities are embedded in the background, as after any write.

A message summary is the LLM's text for one long turn, kept with the content hash it was written
from: a restored copy uses it while its message's text is the same (it is, the archive carries the
text), so the copy's long turns keep their LLM rungs without asking the LLM again. A row written
with a note (the LLM failed or was over budget) is left out: the copy's sweep asks again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import Model, QuerySet

from apps.conversations.models import Community, CommunityKind, CommunityMember, ItemAccess, MessageSummary
from apps.conversations.tasks import embed_communities
from apps.core import background
from apps.core.archive.parts import (
    ArchivePart,
    ExportScope,
    RestoreScope,
    Row,
    RowError,
    batched,
    register,
    stored_vector_export,
    stored_vector_restore,
)

COMMUNITY_FIELDS = ("kind", "key", "title", "summary", "summary_tokens", "first_at", "last_at", "computed_at")
# Who wrote a community's text and from what (an LLM's kept on restore, not asked again); an archive
# written before them restores the model's defaults.
WRITER_FIELDS = ("summary_provider", "summary_note", "source_hash")


def _max_length(field: str, model: type[Model] = Community) -> int:
    return int(getattr(model._meta.get_field(field), "max_length", 0) or 0)


def communities_export(scope: ExportScope) -> Iterable[Row]:
    communities = Community.objects.filter(workspace_id=scope.workspace_id).order_by("id")
    fields: tuple[str, ...] = ("id", "layer_id", *COMMUNITY_FIELDS, *WRITER_FIELDS)
    if scope.embeddings:
        fields = (*fields, "embedding", "embedding_model")
    for batch in batched(iter(communities.values(*fields).iterator(chunk_size=500)), 500):
        members: dict[int, list[int]] = {}
        rows = CommunityMember.objects.filter(community_id__in=[c["id"] for c in batch]).order_by("item_id")
        for community_id, item_id in rows.values_list("community_id", "item_id"):
            members.setdefault(community_id, []).append(item_id)
        for row in batch:
            out = {"layer": row.pop("layer_id"), **row, "members": members.get(row["id"], [])}
            yield stored_vector_export(out) if scope.embeddings else out


def communities_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count, pending = 0, False
    for batch in batched(rows, 500):
        built = []
        for row in batch:
            if row["kind"] not in CommunityKind.values:
                raise RowError(f"unknown community kind {row['kind']!r}")
            built.append(
                Community(
                    workspace_id=scope.workspace_id,
                    layer_id=scope.ids.get("layer", row["layer"]),
                    **{f: row[f] for f in COMMUNITY_FIELDS},
                    **{f: row[f][: _max_length(f)] for f in WRITER_FIELDS if isinstance(row.get(f), str)},
                    **stored_vector_restore(scope, row),
                )
            )
        created = Community.objects.bulk_create(built)
        CommunityMember.objects.bulk_create(
            CommunityMember(community_id=community.pk, item_id=scope.ids.get("item", item))
            for row, community in zip(batch, created, strict=True)
            for item in row["members"]
        )
        pending = pending or any(community.embedding is None for community in built)
        count += len(built)
    if pending:
        background.enqueue(embed_communities, None)
    return count


ACCESS_FIELDS = ("access_count", "last_accessed_at")
MESSAGE_SUMMARY_FIELDS = ("content_hash", "summary", "title", "provider", "written_at")


def access_export(scope: ExportScope) -> Iterable[Row]:
    return _item_rows_export(ItemAccess.objects.filter(item__workspace_id=scope.workspace_id), ACCESS_FIELDS)


def access_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    return _item_rows_restore(scope, rows, ItemAccess, ACCESS_FIELDS)


def message_summaries_export(scope: ExportScope) -> Iterable[Row]:
    written = MessageSummary.objects.filter(item__workspace_id=scope.workspace_id, note="")
    return _item_rows_export(written, MESSAGE_SUMMARY_FIELDS)


def message_summaries_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    return _item_rows_restore(scope, rows, MessageSummary, MESSAGE_SUMMARY_FIELDS)


def _item_rows_export(rows: QuerySet[Any], fields: tuple[str, ...]) -> Iterator[Row]:
    """Rows of one item each (access counts, message summaries): the item's id and `fields`."""
    for row in rows.order_by("item_id").values("item_id", *fields).iterator(chunk_size=2000):
        yield dict(row)


def _item_rows_restore(scope: RestoreScope, rows: Iterator[Row], model: type[Model], fields: tuple[str, ...]) -> int:
    """Rows of one item each, on the copy's items; a text longer than its column (a hand-edited
    archive) is cut to it, as communities' are."""
    count = 0
    for batch in batched(rows, 2000):
        model._default_manager.bulk_create(
            model(item_id=scope.ids.get("item", row["item_id"]), **{f: _cut(model, f, row[f]) for f in fields})
            for row in batch
        )
        count += len(batch)
    return count


def _cut(model: type[Model], field: str, value: object) -> object:
    limit = _max_length(field, model)
    return value[:limit] if limit and isinstance(value, str) else value


def register_parts() -> None:
    register(
        ArchivePart(
            name="communities",
            order=60,
            export=communities_export,
            restore=communities_restore,
            occupied=lambda workspace_id: Community.objects.filter(workspace_id=workspace_id).exists(),
            count=lambda s: Community.objects.filter(workspace_id=s.workspace_id).count(),
        ),
        ArchivePart(
            name="item_access",
            order=70,
            export=access_export,
            restore=access_restore,
            occupied=lambda workspace_id: False,  # rows of items: the layers part decides
            count=lambda s: ItemAccess.objects.filter(item__workspace_id=s.workspace_id).count(),
        ),
        ArchivePart(
            name="message_summaries",
            order=75,
            export=message_summaries_export,
            restore=message_summaries_restore,
            occupied=lambda workspace_id: False,  # rows of items: the layers part decides
            count=lambda s: MessageSummary.objects.filter(item__workspace_id=s.workspace_id, note="").count(),
        ),
    )
