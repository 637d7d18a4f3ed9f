"""bench_tenants, small: a victim's steady requests beside an attacker that saturates one worker with a
small pool (issue 26 finding 2) get no 5xx; the attacker is the one told `overloaded`."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from apps.workspaces.models import Workspace
from tests.support.live import PORTS, port_free_in

pytestmark = pytest.mark.server

ROW = re.compile(r"^(unloaded|burst \d+|unloaded again) +(?P<victim>\d+) +[\d.]+ +[\d.]+ +[\d.]+  (?P<errors>.*?) {2,}")


def test_the_victim_never_gets_a_5xx_while_the_attacker_saturates_the_worker(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One worker with four pooled connections, a share of two: 40 attacker clients would hold every
    # connection for longer than the pool's timeout without the shares. A queue wait of 50 ms (200 ms
    # below the share) makes the attacker's refusals certain however fast the machine: with the
    # default 250 ms (1 s below the share), a fast one drained the attacker's queue of 39 in time.
    monkeypatch.setenv("DB_POOL_MAX", "4")
    monkeypatch.setenv("WORKSPACE_MAX_CONCURRENT", "2")
    monkeypatch.setenv("WORKSPACE_QUEUE_MS", "50")
    out = io.StringIO()
    call_command(
        "bench_tenants", items=200, seconds=3, pace=0.05, bursts="8,40", workers=1, port=port_free_in(PORTS), stdout=out
    )
    lines = out.getvalue().splitlines()
    table = lines[lines.index("") + 1 :]
    rows = [m for m in map(ROW.match, table) if m]
    assert [m[1] for m in rows] == ["unloaded", "burst 8", "burst 40", "unloaded again"], lines
    assert all(int(m["victim"]) >= 1 for m in rows), lines  # a loaded machine may serve only a few in 3 s
    assert not any(re.search(r"\b5\d\d\b", m["errors"]) for m in rows), lines
    assert "victim 5xx: 0" in table[-2], lines
    assert "429 overloaded" in next(line for line in table if line.startswith("burst 40")), lines
    assert not Workspace.objects.filter(slug__startswith="bench-").exists()
