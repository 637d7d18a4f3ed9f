"""bench_embedding: a small real run, bare model against the service end to end, one JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.bench.management.commands.bench_embedding import DEFAULT_PATH
from apps.workspaces.models import Workspace


@pytest.mark.django_db(transaction=True)
def test_it_measures_the_bare_model_and_the_service_on_the_same_turns(tmp_path: Path) -> None:
    out = io.StringIO()
    figures_path = tmp_path / "embedding.json"
    call_command("bench_embedding", items=12, json=figures_path, stdout=out)
    figures = json.loads(figures_path.read_text())
    assert figures["items"] >= 12 and figures["bare_items_per_s"] > 0 and figures["service_items_per_s"] > 0
    assert figures["bare_items_per_s"] == max(row["items_per_s"] for row in figures["bare"])
    assert {(row["threads"], row["calls"]) for row in figures["bare"]} >= {(1, 1), (1, 2), (2, 1)}
    assert figures["context_during_load"]["errors"] == 0
    load = figures["context_during_load"]
    assert 0 < load["writes_done_s"] <= figures["items"] / figures["service_items_per_s"]
    assert 0 < load["live_turn_embedded_s"] <= figures["items"] / figures["service_items_per_s"]
    assert load["pending_when_live_turn_posted"] >= 0
    assert "of bare" in out.getvalue()
    assert not Workspace.objects.filter(slug__startswith="bench-embedding-").exists()  # cleaned up


def test_it_refuses_a_missing_set_and_bad_counts(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no LoCoMo set"):
        call_command("bench_embedding", path=tmp_path / "none.json", stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("bench_embedding", items=0, path=DEFAULT_PATH, stdout=io.StringIO())
