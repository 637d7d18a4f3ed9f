"""bench_dashboard on a small size: every range timed beside the raw baseline, and the workspace gone after."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from apps.assembly.models import AssemblyRecord
from apps.workspaces.models import Workspace

ROW = re.compile(r"^ *(1h|24h|7d|30d) +[\d.]+ / +[\d.]+ +[\d.]+ / +[\d.]+ +[\d.]+  < 300 ms (met|MISSED) ")


def test_it_times_every_range_and_deletes_its_workspace(db: None) -> None:
    out = io.StringIO()
    call_command("bench_dashboard", records=200, repeat=1, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("seeded 200 records in "), lines
    assert [m[1] for m in map(ROW.match, lines) if m] == ["1h", "24h", "7d", "30d"], lines
    assert not Workspace.objects.filter(slug__startswith="bench-dashboard-").exists()
    assert not AssemblyRecord.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="bench-").exists()


def test_it_keeps_the_workspace_when_asked_and_refuses_bad_sizes(db: None) -> None:
    out = io.StringIO()
    call_command("bench_dashboard", records=20, repeat=1, keep=True, stdout=out)
    slug = out.getvalue().splitlines()[-1].removeprefix("kept workspace ")
    assert AssemblyRecord.objects.filter(workspace__slug=slug).count() == 20
    with pytest.raises(CommandError, match="--records"):
        call_command("bench_dashboard", records=0)
