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
