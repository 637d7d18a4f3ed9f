"""Vector recall by scope size (apps/bench/assembly/scope_recall.py, `bench_assembly --scope-curve`): the
strategy picked for a mid-size scope of a generated set finds what exact search finds, and the command
prints one row per scope and strategy."""

from __future__ import annotations

from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

from apps.bench.assembly import bench_delete, bench_seed
from apps.bench.assembly.scope_recall import VARIANTS, scope_recall_curve, scope_vectors, scopes
from apps.layers import vectors

pytestmark = pytest.mark.django_db(transaction=True)
ITEMS = 20_000  # bench vectors: 400 passages' embeddings, each jittered into 50 items
MID_SCOPE = 10_000  # items: at 100k the HNSW walk found 0.47-0.68 of the exact top 50 at this size
RECALL_BOUND = 0.95


def test_a_mid_size_scope_finds_what_exact_search_finds() -> None:
    seeded = bench_seed(items=ITEMS)
    try:
        ((size, filters), _whole) = scopes(workspace_id=seeded.workspace.pk, sizes=[MID_SCOPE])
        _, queries = scope_vectors(name="bench", queries=12)
        (chosen,) = scope_recall_curve(
            scoped=[(size, filters)], vectors=queries, k=settings.RETRIEVAL_CANDIDATES, variants=(VARIANTS[-1],)
        )
    finally:
        bench_delete(seeded=seeded)
    assert abs(size - MID_SCOPE) < 500
    assert chosen.recall >= RECALL_BOUND, (chosen, vectors.search_strategy(scope_size=size))


def test_the_command_prints_recall_and_latency_per_scope_and_strategy() -> None:
    out = StringIO()
    call_command("bench_assembly", items=1_500, scope_curve="500,1000", vectors="bench", queries=3, stdout=out)
    rows = [line.split() for line in out.getvalue().splitlines() if line[:8].strip().replace(",", "").isdigit()]
    names = [variant.name.split()[0] for variant in VARIANTS]
    assert [row[1] for row in rows] == names * 3  # two scopes and the whole workspace
    assert [row[0] for row in rows[:: len(names)]] == ["484", "969", "1,500"]
    exact = [float(row[2]) for row in rows if row[1] == "exact"]
    assert exact == [1.0, 1.0, 1.0]  # exact search against itself
