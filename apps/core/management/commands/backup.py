"""`manage.py backup [PATH]`: a consistent backup of the database (embedded or DATABASE_URL) in one file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.backup import BackupError, backup
from apps.core.backup import summary as _summary


class Command(BaseCommand):
    help = "Back up the database to one file (default var/backups/contextarch-<UTC time>.tar) while the service serves."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", default=None)

    def handle(self, *args: Any, path: str | None, **options: Any) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = Path(path) if path else Path(settings.VAR_DIR) / "backups" / f"contextarch-{stamp}.tar"
        try:
            manifest = backup(target)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        counts = _summary(manifest["counts"])
        self.stdout.write(f"Backup written to {target} ({manifest['dump_bytes']:,} bytes of dump; {counts}).")
