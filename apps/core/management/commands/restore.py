"""`manage.py restore PATH [--replace]`: load a backup made by `manage.py backup`, checked first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.backup import BackupError, restore
from apps.core.backup import summary as _summary


class Command(BaseCommand):
    help = (
        "Restore a backup into the configured database: its hash and version are checked first, it loads in one "
        "transaction, then migrations bring it up to this version. Refuses a database that holds data "
        "unless --replace. Stop the service first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--replace", action="store_true", help="drop what the database holds and restore over it")

    def handle(self, *args: Any, path: str, replace: bool, **options: Any) -> None:
        try:
            done = restore(Path(path), replace=replace)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Restored {path} (taken {done.manifest['created_at']}; {_summary(done.counts)}).")
        differ = sorted(k for k, n in done.manifest["counts"].items() if done.counts.get(k, n) != n)
        if differ:  # a migration since the backup may move rows; say so rather than hide it
            self.stdout.write(f"Row counts that differ from the backup's manifest: {', '.join(differ)}")
