"""Assembly benchmark: bulk-load a synthetic workspace, then time real context requests.

Vectors for the synthetic items are real e5 passage embeddings of a few hundred distinct texts,
jittered per item, so the HNSW index sees a realistic distribution without embedding every row
(embedding 10k passages on a CPU would take minutes and is not what is being measured).
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.utils import timezone

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import embeddings, tokenizer
from apps.layers.models import Item, Layer
from apps.layers.services import content_hash
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

SUBJECTS = [
    "billing",
    "deployments",
    "search",
    "the mobile app",
    "backups",
    "onboarding",
    "latency",
    "the cache",
    "payments",
    "auth",
    "the data warehouse",
    "alerts",
    "the API gateway",
    "invoices",
    "the scheduler",
]
FACTS = [
    "fails when the queue is full",
    "was migrated to PostgreSQL last quarter",
    "needs a review every Friday",
    "is owned by the platform team",
    "retries three times with backoff",
    "has a 99.9% availability target",
    "logs every request with a trace id",
    "is documented in the runbook",
    "depends on Redis for locks",
    "must stay under 100 ms at p95",
    "was rewritten in Go",
    "has flaky integration tests",
]
QUERIES = [
    "why does billing fail",
    "who owns the scheduler",
    "latency target of the API gateway",
    "how are backups retried",
    "what depends on Redis",
    "which service was rewritten",
    "onboarding checklist",
    "payments availability",
    "alerts runbook",
    "cache migration",
]


@dataclass(frozen=True)
class BenchResult:
    items: int
    requests: int
    load_seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    throughput_rps: float
    mean_tokens: float


def _texts(n: int, rng: random.Random) -> list[str]:
    return [f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(FACTS)} (note {i})." for i in range(n)]


def bench_load(*, items: int, seed: int = 7) -> tuple[Workspace, Layer, float]:
    """A fresh workspace with `items` embedded items spread over a small hierarchy."""
    rng = random.Random(seed)
    started = time.perf_counter()
    workspace, _ = workspace_create(slug=f"bench-{int(time.time())}-{rng.randrange(10**6)}")
    root = Layer.objects.get(workspace=workspace, kind="company")
    project = Layer.objects.create(workspace=workspace, kind="project", name="bench project", parent=root)
    sessions = [
        Layer.objects.create(workspace=workspace, kind="session", name=f"s{i}", parent=project) for i in range(10)
    ]
    distinct = _texts(min(300, items), rng)
    base = embeddings.embed_passages(distinct)
    encoding = tokenizer.encoding_for_model("gpt-4o").encoding
    now = timezone.now()
    np_rng = np.random.default_rng(seed)
    rows = []
    for i in range(items):
        k = i % len(distinct)
        vector = base[k] + np_rng.normal(0, 0.02, base.shape[1]).astype(np.float32)
        vector /= np.linalg.norm(vector)
        text = distinct[k].replace(f"(note {k})", f"(note {i})")
        rows.append(
            Item(
                workspace=workspace,
                layer=sessions[i % len(sessions)],
                kind="memory",
                type="fact",
                content=text,
                token_count=tokenizer.count_tokens(text, encoding),
                content_hash=content_hash(title="", content=text),
                embedding=vector,
                embedding_model="bench",
                created_at=now,
            )
        )
    with transaction.atomic():
        Item.objects.bulk_create(rows, batch_size=1000)
    return workspace, project, time.perf_counter() - started


def bench_run(*, workspace: Workspace, layer: Layer, requests: int, budget: int) -> list[tuple[float, int]]:
    """(elapsed ms, tokens) per request, measured end to end around the service call."""
    results = []
    for i in range(requests):
        query = f"{QUERIES[i % len(QUERIES)]} {i}"  # distinct text: every request embeds its query
        started = time.perf_counter()
        body = context_assemble(
            workspace=workspace,
            params=ContextParams(layer_id=layer.pk, query=query, token_budget=budget, format="markdown"),
        )
        results.append(((time.perf_counter() - started) * 1000, body["total_tokens"]))
    return results


def summarize(*, items: int, load_seconds: float, samples: list[tuple[float, int]]) -> BenchResult:
    times = sorted(ms for ms, _ in samples)
    pct = statistics.quantiles(times, n=100, method="inclusive")
    return BenchResult(
        items=items,
        requests=len(times),
        load_seconds=load_seconds,
        p50_ms=pct[49],
        p95_ms=pct[94],
        p99_ms=pct[98],
        throughput_rps=1000 * len(times) / sum(times),
        mean_tokens=statistics.fmean(t for _, t in samples),
    )
