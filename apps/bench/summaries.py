"""bench_summaries: extractive summarization throughput and time per depth on synthetic layers.

Seeds a throwaway workspace (company → orgs → teams → projects, `items` items per layer, made of
deterministic varied sentences), times the extractive summarizer alone per depth, then the whole
service (source, hash, three depths, writes) per layer, deepest first like the sweep.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from apps.layers.models import Item, Layer, LayerKind
from apps.layers.services import content_hash, layer_create
from apps.summaries.extractive import extractive_summary, rank, select, split_sentences
from apps.summaries.models import DEPTH_TOKEN_LIMITS
from apps.summaries.providers import DEPTHS
from apps.summaries.services import layer_summarize
from apps.summaries.sources import source_of
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

SUBJECTS = [
    "The charge service",
    "The retry worker",
    "The payments team",
    "The checkout page",
    "The ledger job",
    "The fraud model",
    "The search index",
    "The billing API",
    "The on-call rota",
    "The deploy pipeline",
]
VERBS = [
    "now retries",
    "stopped sending",
    "was moved to",
    "depends on",
    "no longer blocks",
    "must validate",
    "was rolled back from",
    "caches",
    "reports errors to",
    "was rewritten around",
]
OBJECTS = [
    "Stripe webhooks",
    "the EU region",
    "idempotency keys",
    "the Redis queue",
    "nightly backups",
    "card tokens",
    "the Adyen fallback",
    "rate-limited requests",
    "the audit log",
    "feature flags",
]
TAILS = [
    "after the March incident",
    "behind a flag",
    "to cut p95 latency",
    "as agreed in review",
    "",
    "until the migration ends",
    "for EU customers only",
    "with exponential backoff",
    "",
    "since Tuesday",
]


def sentence(rng: random.Random) -> str:
    tail = rng.choice(TAILS)
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{' ' + tail if tail else ''}."


@dataclass
class Seeded:
    workspace: Workspace
    layers: list[Layer]


def bench_seed(*, layers: int, items: int, seed: int = 7) -> Seeded:
    """A workspace with about `layers` layers under its company, `items` items in each."""
    rng = random.Random(seed)
    workspace, _ = workspace_create(slug=f"bench-summaries-{int(time.time() * 1000)}")
    root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    created = [root]
    kinds: list[str] = [LayerKind.ORG, LayerKind.TEAM, LayerKind.PROJECT]
    parent_pool = [root]
    while len(created) < layers:
        parent = parent_pool[(len(created) - 1) % len(parent_pool)]
        depth = kinds.index(parent.kind) + 1 if parent.kind in kinds else 0
        kind = kinds[min(depth, len(kinds) - 1)]
        layer = layer_create(workspace=workspace, kind=kind, name=f"{kind} {len(created)}", parent=parent)
        created.append(layer)
        if kind != LayerKind.PROJECT and len(parent_pool) < layers // 3 + 1:
            parent_pool.append(layer)
    now = timezone.now()
    rows = []
    for layer in created:
        for _ in range(items):
            content = " ".join(sentence(rng) for _ in range(rng.randint(2, 4)))
            rows.append(
                Item(
                    workspace=workspace,
                    layer=layer,
                    kind="memory",
                    type="fact",
                    content=content,
                    content_hash=content_hash(title="", content=content),
                    token_count=len(content) // 4,
                    created_at=now,
                )
            )
    Item.objects.bulk_create(rows, batch_size=2000)
    return Seeded(workspace=workspace, layers=created)


def bench_run(*, seeded: Seeded, write: Callable[[str], Any]) -> dict[str, float]:
    """Time the extractive summarizer (ranking once, then each depth) and the whole service; print and return."""
    sources = [source_of(layer=layer).texts for layer in seeded.layers]
    extractive_summary(sources[0], 50)  # load the tokenizer before timing
    steps: dict[str, list[float]] = {"rank": [], **{d: [] for d in DEPTHS}}
    started = time.perf_counter()
    for texts in sources:
        t0 = time.perf_counter()
        ranked = rank(texts)
        steps["rank"].append((time.perf_counter() - t0) * 1000)
        for depth in DEPTHS:
            t0 = time.perf_counter()
            if ranked is not None:
                select(ranked, DEPTH_TOKEN_LIMITS[depth])
            steps[depth].append((time.perf_counter() - t0) * 1000)
    extractive_seconds = time.perf_counter() - started
    sentences = sum(len(split_sentences(t)) for texts in sources for t in texts) / len(sources)
    figures = {"extractive_layers_per_second": len(sources) / extractive_seconds}
    write(
        f"extractive: {len(sources)} layers x 3 depths in {extractive_seconds:.2f}s = "
        f"{figures['extractive_layers_per_second']:.1f} layers/s (~{sentences:.0f} source sentences per layer)"
    )
    for step, label in [("rank", "rank (split, tf-idf, centrality; once per layer)")] + [
        (d, f"{d} (<= {DEPTH_TOKEN_LIMITS[d]} tokens)") for d in DEPTHS
    ]:
        times = sorted(steps[step])
        mean, p95 = statistics.fmean(times), times[int(0.95 * (len(times) - 1))]
        figures[f"{step}_mean_ms"] = mean
        write(f"  {label:<48} mean={mean:.2f}ms p95={p95:.2f}ms")
    ordered = sorted(seeded.layers, key=lambda layer: -["company", "org", "team", "project"].index(layer.kind))
    started = time.perf_counter()
    for layer in ordered:
        layer_summarize(layer=layer, force=True)
    service_seconds = time.perf_counter() - started
    figures["service_layers_per_second"] = len(ordered) / service_seconds
    write(
        f"service (source + hash + 3 depths + writes, roll-up order): {len(ordered)} layers in "
        f"{service_seconds:.2f}s = {figures['service_layers_per_second']:.1f} layers/s"
    )
    return figures


def bench_delete(*, seeded: Seeded) -> None:
    Item.objects.filter(workspace=seeded.workspace).delete()
    seeded.workspace.delete()
