"""`manage.py bench_archive`: export and import times of the bench workspace (bench_assembly's seed)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from apps.bench.assembly import bench_delete, bench_seed
from apps.core.archive.export import archive_export
from apps.core.archive.restore import archive_restore
from apps.layers.models import Item
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create


class Command(BaseCommand):
    help = (
        "Seed bench_assembly's workspace of --items embedded items, export it without and with vectors, "
        "import the archive with vectors into a new workspace (vectors inserted into the live HNSW index), "
        "and print the times and sizes; both workspaces are deleted afterwards."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        seeded = bench_seed(items=options["items"])
        self.stdout.write(
            f"seeded {seeded.items:,} items in {seeded.sessions} sessions: {time.perf_counter() - started:.1f} s"
        )
        source = {"slug": seeded.workspace.slug, "name": seeded.workspace.name}
        target: Workspace | None = None
        with tempfile.TemporaryDirectory() as tmp:
            try:
                paths = {}
                for vectors in (False, True):
                    path = paths[vectors] = Path(tmp) / f"archive-{vectors}.zip"
                    clock = _Clock()
                    with path.open("wb") as out:
                        archive_export(workspace_id=seeded.workspace.pk, source=source, out=out, embeddings=vectors)
                    self._line("export", vectors, clock, path, seeded.items)
                target, _ = workspace_create(slug=f"{seeded.workspace.slug}-copy")
                clock = _Clock()
                with paths[True].open("rb") as archive:
                    restored = archive_restore(workspace_id=target.pk, source=archive)
                self._line("import", True, clock, paths[True], restored.rows["items"])
                assert Item.objects.filter(workspace=target, embedding__isnull=True).count() == 0
            finally:
                bench_delete(seeded=seeded)
                if target is not None:
                    Item.objects.filter(workspace=target).only("pk", "workspace_id").delete()
                    target.delete()

    def _line(self, what: str, vectors: bool, clock: _Clock, path: Path, items: int) -> None:
        wall, python, postgres = clock.read()
        self.stdout.write(
            f"{what} {'with' if vectors else 'without'} vectors: {wall:.1f} s wall, CPU {python:.1f} s here + "
            f"{postgres:.1f} s in PostgreSQL ({items / (python + postgres):,.0f} items per CPU second), "
            f"archive {path.stat().st_size / 1e6:.1f} MB"
        )


def _backend_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend so far (a local server: its /proc entry)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0  # a remote server: its CPU is not counted
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Clock:
    """Wall time, this process's CPU time and the backend's CPU time since it was made."""

    def __init__(self) -> None:
        self.wall, self.python, self.postgres = time.perf_counter(), time.process_time(), _backend_cpu()

    def read(self) -> tuple[float, float, float]:
        return (
            time.perf_counter() - self.wall,
            time.process_time() - self.python,
            _backend_cpu() - self.postgres,
        )
