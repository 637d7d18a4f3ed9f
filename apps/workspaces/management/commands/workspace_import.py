"""`manage.py workspace_import <workspace> <path>`: an archive restored into an empty workspace, with progress."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.archive.progress import BarProgress
from apps.core.archive.restore import archive_restore
from apps.core.errors import DomainError
from apps.core.progress import command_stream
from apps.workspaces.selectors import workspace_get_by_slug


class Command(BaseCommand):
    help = (
        "Restore the archive at PATH (made by workspace_export or GET /api/v1/workspace/export/) into an empty "
        "workspace (create it first: manage.py create_workspace <slug>). All or nothing: a damaged archive or a "
        "workspace that holds anything writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="The target workspace's slug.")
        parser.add_argument("path", type=Path, help="The archive to restore.")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = workspace_get_by_slug(slug=options["workspace"])
        if workspace is None:
            raise CommandError(f"no workspace {options['workspace']!r}: create it with manage.py create_workspace")
        path: Path = options["path"]
        progress = BarProgress(label="import", stream=command_stream(self.stderr))
        started = time.monotonic()
        try:
            with path.open("rb") as source:
                restored = archive_restore(workspace_id=workspace.pk, source=source, progress=progress)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code}); nothing was written") from exc
        finally:
            progress.close()
        self.stdout.write(
            f"Imported {path} into {workspace.slug!r} in {time.monotonic() - started:.1f} s: "
            + ", ".join(f"{name} {n:,}" for name, n in restored.rows.items() if n)
        )
