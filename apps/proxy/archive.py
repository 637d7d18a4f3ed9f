"""The proxy's parts of a workspace archive (apps/core/archive): upstreams and settings.

An upstream travels without its key (`key_sealed` is never read here): the restored upstream has
none, and an admin sets it again (`PATCH /api/v1/upstreams/{id}/`). The proxy's calls are not
archived (like assembly records, they are the source instance's history).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from apps.core.archive.parts import ArchivePart, ExportScope, RestoreScope, Row, model_part, register
from apps.proxy.models import ProxySettings, Upstream


def settings_export(scope: ExportScope) -> Iterable[Row]:
    rows = ProxySettings.objects.filter(workspace_id=scope.workspace_id).values("default_parent_id")
    return ({"default_parent": row["default_parent_id"]} for row in rows)


def settings_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
    for row in rows:
        parent = scope.ids.maybe("layer", row["default_parent"])
        ProxySettings.objects.update_or_create(workspace_id=scope.workspace_id, defaults={"default_parent_id": parent})
        count += 1
    return count


def register_parts() -> None:
    register(
        model_part(name="upstreams", order=140, model=Upstream, fields=("kind", "base_url")),
        ArchivePart(
            name="proxy_settings",
            order=150,
            export=settings_export,
            restore=settings_restore,
            # A settings row without a default parent is what reading the settings leaves: empty.
            occupied=lambda workspace_id: ProxySettings.objects.filter(
                workspace_id=workspace_id, default_parent__isnull=False
            ).exists(),
            count=lambda s: ProxySettings.objects.filter(workspace_id=s.workspace_id).count(),
        ),
    )
