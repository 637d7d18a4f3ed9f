"""The HNSW recall curve: for each `hnsw.ef_search`, recall@k of the filtered vector search against
exact search (the same statement with index scans off), and its latency, on the bench workspace.

HNSW_EF_SEARCH (settings) is chosen from this curve: the smallest value whose recall is within a
point of the best, since latency grows with it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction

from apps.layers.filters import ItemFilters
from apps.layers.models import Layer
from apps.layers.vectors import nearest_items


@dataclass(frozen=True)
class CurvePoint:
    ef_search: int
    recall: float  # mean over the queries of the share of the top k as similar as the exact k-th (ties count)
    p50_ms: float
    p95_ms: float


TIE = 1e-3  # a hit this close to the exact k-th similarity counts (ann-benchmarks' epsilon): near-duplicates tie


def _search(filters: ItemFilters, vector: np.ndarray, k: int, settings_sql: str) -> tuple[list[float], float]:
    """The similarities of the top `k`, and the search's milliseconds."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings_sql)
        started = time.perf_counter()
        hits = nearest_items(filters=filters, query_vector=vector, limit=k)
        return [hit.similarity for hit in hits], (time.perf_counter() - started) * 1000


def recall_at(found: list[float], exact: list[float], k: int) -> float:
    """Share of the k answers at least as similar as the exact k-th (less the tie margin)."""
    if not exact:
        return 1.0
    threshold = exact[min(k, len(exact)) - 1] - TIE
    return sum(1 for similarity in found[:k] if similarity >= threshold) / min(k, len(exact))


def ef_search_curve(*, workspace_id: int, vectors: list[np.ndarray], efs: list[int], k: int) -> list[CurvePoint]:
    """One point per `efs` value, over the same query vectors (asked at every layer of the workspace)."""
    layers = tuple(Layer.objects.filter(workspace_id=workspace_id).values_list("pk", flat=True))
    filters = ItemFilters(workspace_id=workspace_id, layer_ids=layers)
    exact = [_search(filters, v, k, "SET LOCAL enable_indexscan = off")[0] for v in vectors]
    points = []
    for ef in efs:
        _search(filters, vectors[0], k, f"SET LOCAL hnsw.ef_search = {int(ef)}")  # warm-up
        found, times = zip(
            *(_search(filters, v, k, f"SET LOCAL hnsw.ef_search = {int(ef)}") for v in vectors), strict=True
        )
        recall = statistics.fmean(recall_at(f, e, k) for f, e in zip(found, exact, strict=True))
        ordered = sorted(times)
        points.append(CurvePoint(ef, recall, statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]))
    return points
