"""The conversations app's parts of a workspace archive: communities and access counts (apps/core/archive).

A community carries its members' item ids. Its graph state (what it was computed from) is not
archived: it names the source's item ids, so the periodic sweep recomputes the restored sessions'
communities once, from the same messages (deterministic: the same keys and members).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from apps.conversations.models import Community, CommunityKind, CommunityMember, ItemAccess
from apps.core.archive.parts import ArchivePart, ExportScope, RestoreScope, Row, RowError, batched, register

COMMUNITY_FIELDS = ("kind", "key", "title", "summary", "summary_tokens", "first_at", "last_at", "computed_at")


def communities_export(scope: ExportScope) -> Iterable[Row]:
    communities = Community.objects.filter(workspace_id=scope.workspace_id).order_by("id")
    for batch in batched(iter(communities.values("id", "layer_id", *COMMUNITY_FIELDS).iterator(chunk_size=500)), 500):
        members: dict[int, list[int]] = {}
        rows = CommunityMember.objects.filter(community_id__in=[c["id"] for c in batch]).order_by("item_id")
        for community_id, item_id in rows.values_list("community_id", "item_id"):
            members.setdefault(community_id, []).append(item_id)
        for row in batch:
            yield {"layer": row.pop("layer_id"), **row, "members": members.get(row["id"], [])}


def communities_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
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
                )
            )
        created = Community.objects.bulk_create(built)
        CommunityMember.objects.bulk_create(
            CommunityMember(community_id=community.pk, item_id=scope.ids.get("item", item))
            for row, community in zip(batch, created, strict=True)
            for item in row["members"]
        )
        count += len(built)
    return count


def access_export(scope: ExportScope) -> Iterable[Row]:
    rows = ItemAccess.objects.filter(item__workspace_id=scope.workspace_id).order_by("item_id")
    for row in rows.values("item_id", "access_count", "last_accessed_at").iterator(chunk_size=2000):
        yield dict(row)


def access_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
    for batch in batched(rows, 2000):
        ItemAccess.objects.bulk_create(
            ItemAccess(
                item_id=scope.ids.get("item", row["item_id"]),
                access_count=row["access_count"],
                last_accessed_at=row["last_accessed_at"],
            )
            for row in batch
        )
        count += len(batch)
    return count


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
    )
