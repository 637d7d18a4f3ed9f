"""bench_assembly --tracing-cost: in-process vector assemblies with tracing off and on, alternating, on a small seed."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.core import telemetry
from apps.workspaces.models import Workspace

STATE = re.compile(r"^tracing +(?P<state>off|on): (?P<n>\d+) assemblies, cpu (?P<cpu>[\d.]+) ms per assembly")


def test_it_prints_the_cpu_of_each_state_and_leaves_tracing_off(transactional_db: None) -> None:
    out = io.StringIO()

    call_command("bench_assembly", items=200, queries=4, tracing_cost=2, stdout=out)

    lines = out.getvalue().splitlines()
    states = {m["state"]: m for m in map(STATE.match, lines) if m}
    assert set(states) == {"off", "on"}, lines
    assert all(m["n"] == "8" and float(m["cpu"]) > 0 for m in states.values()), lines
    assert any(line.startswith("on - off: ") for line in lines), lines
    exported = next(line for line in lines if line.startswith("exported: "))
    assert not exported.startswith("exported: 0 "), lines  # the "on" rounds' spans went out
    assert any(line.startswith("tracing off, its code's cost: ") for line in lines), lines
    assert not telemetry.tracing()
    assert not Workspace.objects.filter(slug__startswith="bench-").exists()


@pytest.mark.parametrize("rounds", [0, -1])
def test_it_refuses_no_rounds_before_seeding(transactional_db: None, rounds: int) -> None:
    with pytest.raises(CommandError, match="--tracing-cost"):
        call_command("bench_assembly", items=20, queries=2, tracing_cost=rounds, stdout=io.StringIO())
