"""The workspaces app's part of a workspace archive (apps/core/archive): the workspace's settings.

Only settings travel: the target keeps its own slug, name, members, invitations and API keys (the
keys' hashes, like every secret, never enter an archive).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from apps.core.archive.parts import ArchivePart, ExportScope, RestoreScope, Row, register
from apps.workspaces.models import Workspace

SETTINGS = ("records_retention_days", "messages_retention_days", "layer_kind_ttl_days")


def settings_export(scope: ExportScope) -> Iterable[Row]:
    return Workspace.objects.filter(pk=scope.workspace_id).values("slug", "name", *SETTINGS)


def settings_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
    for row in rows:
        # An archive made before a setting existed lacks it: the target keeps its own.
        Workspace.objects.filter(pk=scope.workspace_id).update(**{name: row[name] for name in SETTINGS if name in row})
        count += 1
    return count


def register_parts() -> None:
    register(
        ArchivePart(
            name="workspace",
            order=0,
            export=settings_export,
            restore=settings_restore,
            occupied=lambda workspace_id: False,
            count=lambda scope: 1,
        )
    )
