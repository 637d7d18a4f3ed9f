"""bench_summaries on a small size prints throughput and time per depth, and cleans up."""

from __future__ import annotations

import io
import re

from django.core.management import call_command

from apps.workspaces.models import Workspace


def test_it_prints_layers_per_second_and_time_per_depth(db: None) -> None:
    out = io.StringIO()
    call_command("bench_summaries", layers=6, items=8, stdout=out)
    text = out.getvalue()
    assert re.search(r"extractive: 6 layers x 3 depths in [\d.]+s = [\d.]+ layers/s", text), text
    assert re.search(r"rank \(split.*mean=[\d.]+ms", text), text
    for depth in ("sentence", "paragraph", "detailed"):
        assert re.search(rf"{depth} \(<= \d+ tokens\) +mean=[\d.]+ms p95=[\d.]+ms", text), text
    assert re.search(r"service .*: 6 layers in [\d.]+s = [\d.]+ layers/s", text), text
    assert not Workspace.objects.filter(slug__startswith="bench-summaries-").exists()


def test_summarize_layers_runs_the_sweep_and_can_force(db: None) -> None:
    from apps.layers.services import ItemInput, items_create
    from apps.summaries.models import Summary
    from tests.conftest import make_tenant

    tenant = make_tenant("sweep")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", stdout=out)
    assert "1 layers: 1 generated, 0 skipped, 0 degraded" in out.getvalue()
    assert Summary.objects.filter(layer=tenant.root).count() == 3
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", stdout=out)
    assert "0 layers" in out.getvalue()  # nothing due any more
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", force=True, stdout=out)
    assert "1 generated" in out.getvalue()
