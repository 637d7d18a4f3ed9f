"""bench_archive on a small seed prints export and import times with their CPU, and cleans up."""

from __future__ import annotations

import io
import re

from django.core.management import call_command

from apps.workspaces.models import Workspace


def test_it_prints_export_and_import_figures_and_deletes_both_workspaces(db: None) -> None:
    out = io.StringIO()
    call_command("bench_archive", items=40, stdout=out)
    text = out.getvalue()
    figures = r"[\d.]+ s wall, CPU [\d.]+ s here \+ [\d.]+ s in PostgreSQL \([\d,]+ items per CPU second\), archive"
    for line in ("export without vectors", "export with vectors", "import with vectors"):
        assert re.search(rf"{line}: {figures} [\d.]+ MB", text), text
    assert not Workspace.objects.filter(slug__startswith="bench-").exists()
