"""`manage.py workspace_export <workspace> <path>`: a workspace's archive written to a file, with progress."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.archive.export import archive_export
from apps.core.archive.progress import BarProgress
from apps.core.progress import command_stream
from apps.workspaces.archive_api import VECTORS_HELP, archive_source
from apps.workspaces.selectors import workspace_get_by_slug


class Command(BaseCommand):
    help = (
        "Write a workspace's archive (a zip of JSON lines with a manifest; README: Workspace export and import) "
        "to PATH; the same archive as GET /api/v1/workspace/export/."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="The workspace's slug.")
        parser.add_argument("path", type=Path, help="The archive to write (replaced if it exists).")
        parser.add_argument("--embeddings", action="store_true", help=VECTORS_HELP)

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = workspace_get_by_slug(slug=options["workspace"])
        if workspace is None:
            raise CommandError(f"no workspace {options['workspace']!r}")
        path: Path = options["path"]
        progress = BarProgress(label="export", stream=command_stream(self.stderr))
        started = time.monotonic()
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("wb") as out:
                manifest = archive_export(
                    workspace_id=workspace.pk,
                    source=archive_source(workspace),
                    out=out,
                    embeddings=options["embeddings"],
                    progress=progress,
                )
            partial.replace(path)  # a reader never sees half an archive under the final name
        finally:
            progress.close()
            partial.unlink(missing_ok=True)
        rows = {name.removesuffix(".jsonl"): m["rows"] for name, m in manifest["members"].items()}
        self.stdout.write(
            f"Exported {workspace.slug!r} to {path} in {time.monotonic() - started:.1f} s "
            f"({path.stat().st_size:,} bytes): " + ", ".join(f"{name} {n:,}" for name, n in rows.items() if n)
        )
