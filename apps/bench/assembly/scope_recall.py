"""Vector recall by scope size: for scopes of growing size in the bench workspace (sets of its session
layers), recall@k of each search strategy against exact search, and its latency.

The strategy vector search picks for a scope's size (`vectors.search_strategy`, EXACT_SEARCH_MAX_ITEMS)
is chosen from this table: exact search while its latency stays near the HNSW walk's, HNSW beyond.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Count

from apps.bench.assembly.corpus import request_bodies
from apps.bench.assembly.locomo_vectors import locomo_vectors
from apps.bench.assembly.recall_curve import recall_at
from apps.layers.filters import ItemFilters
from apps.layers.models import Item, Layer
from apps.layers.vectors import VectorStrategy, nearest_items, search_strategy


@dataclass(frozen=True)
class Variant:
    """A strategy as measured: its name in the table, the strategy and its `hnsw.ef_search` (None: settings)."""

    name: str
    strategy: VectorStrategy | None  # None: the one `search_strategy` picks for the scope's size
    ef_search: int | None = None


VARIANTS = (
    Variant("exact", VectorStrategy.EXACT),
    Variant("hnsw", VectorStrategy.HNSW),
    Variant("iterative", VectorStrategy.ITERATIVE),
    Variant("iterative ef 400", VectorStrategy.ITERATIVE, 400),
    Variant("iterative ef 800", VectorStrategy.ITERATIVE, 800),
    Variant("chosen", None),
)


@dataclass(frozen=True)
class ScopePoint:
    variant: str
    scope: int  # embedded items in the scope
    recall: float  # mean recall@k against exact search over the queries (ties count, recall_curve.TIE)
    p50_ms: float
    p95_ms: float


def scope_vectors(*, name: str, queries: int) -> tuple[tuple[list[str], np.ndarray] | None, list[np.ndarray]]:
    """The corpus the items jitter (None: the bench's passages) and `queries` query vectors, of `name`:
    "bench" (jittered embeddings of the bench's questions) or "locomo" (the development set's questions,
    spread over the set)."""
    if name == "locomo":
        found = locomo_vectors()
        picked = np.linspace(0, len(found.queries) - 1, min(queries, len(found.queries))).astype(int)
        return (found.texts, found.passages), [found.queries[n] for n in picked]
    bodies = request_bodies(layer_id=0, mode="vector", tickets=list(range(queries)), budget=1)
    return None, [np.asarray(body["query_vector"], dtype=np.float32) for body in bodies]


def scopes(*, workspace_id: int, sizes: list[int]) -> list[tuple[int, ItemFilters]]:
    """For each size, the workspace's first session layers whose items come closest to it, with their
    count (sizes the sessions cannot reach are left out); the last scope is every layer of the workspace."""
    counts = dict(
        Item.objects.filter(workspace_id=workspace_id, layer__kind="session")
        .values_list("layer_id")
        .annotate(n=Count("id"))
        .order_by("layer_id")
        .values_list("layer_id", "n")
    )
    found: list[tuple[int, ItemFilters]] = []
    for size in sorted(sizes):
        chosen, total = [], 0
        for layer_id, n in counts.items():
            if abs(total + n - size) >= abs(total - size):
                break
            chosen.append(layer_id)
            total += n
        if chosen and total >= size * 0.9:
            found.append((total, ItemFilters(workspace_id=workspace_id, layer_ids=tuple(chosen))))
    everything = tuple(Layer.objects.filter(workspace_id=workspace_id).values_list("pk", flat=True))
    found.append((Item.objects.filter(workspace_id=workspace_id).count(), ItemFilters(workspace_id, everything)))
    return found


def _search(filters: ItemFilters, vector: np.ndarray, k: int, variant: Variant) -> tuple[list[float], float]:
    """The similarities of the top `k`, and the search's milliseconds."""
    with transaction.atomic(), connection.cursor() as cursor:
        if variant.ef_search is not None:
            cursor.execute(f"SET LOCAL hnsw.ef_search = {int(variant.ef_search)}")
        started = time.perf_counter()
        hits = nearest_items(filters=filters, query_vector=vector, limit=k, strategy=variant.strategy)
        return [hit.similarity for hit in hits], (time.perf_counter() - started) * 1000


def scope_recall_curve(
    *,
    scoped: list[tuple[int, ItemFilters]],
    vectors: list[np.ndarray],
    k: int,
    variants: tuple[Variant, ...] = VARIANTS,
) -> list[ScopePoint]:
    """One point per scope and variant, over the same query vectors."""
    points = []
    for size, filters in scoped:
        exact = [_search(filters, v, k, VARIANTS[0])[0] for v in vectors]
        for variant in variants:
            _search(filters, vectors[0], k, variant)  # warm-up
            found, times = zip(*(_search(filters, v, k, variant) for v in vectors), strict=True)
            recall = statistics.fmean(recall_at(f, e, k) for f, e in zip(found, exact, strict=True))
            ordered = sorted(times)
            p95 = ordered[int(0.95 * (len(ordered) - 1))]
            name = variant.name if variant.strategy else f"chosen ({search_strategy(scope_size=size)})"
            points.append(ScopePoint(name, size, recall, statistics.median(ordered), p95))
    return points
