"""The floor of a vector assembly: what no implementation can skip, timed on the same data and machine.

Per request: a bare pgvector top-k in the workspace (the HNSW index, no other filter; as many as
the assembly's search fetches for the budget), one fetch of those rows' texts, and the exact token
count of what would be packed (texts in rank order until the budget is full). No Django request, no
ranking, no formatting, no record.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from apps.assembly.sources.hits import candidate_limit
from apps.bench.assembly.cpu import postgres_pid, process_cpu_seconds, tree_cpu_seconds
from apps.core import tokenizer

MIN_SECONDS = 0.5  # the vectors are cycled until this long has run: fewer ticks read as no CPU at all


@dataclass(frozen=True)
class Floor:
    """Wall p50 and CPU per request (this process + PostgreSQL), over `requests` vector bodies."""

    requests: int
    p50_ms: float
    cpu_ms: float | None


def _one(workspace_id: int, vector: list[float], budget: int, encoding: str) -> None:
    literal = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id FROM layers_item WHERE workspace_id = %s AND embedding IS NOT NULL "
            "ORDER BY embedding <=> %s::vector LIMIT %s",
            [workspace_id, literal, candidate_limit(budget)],  # as many as the assembly's search fetches
        )
        ids = [row[0] for row in cur.fetchall()]
        cur.execute("SELECT id, content FROM layers_item WHERE id = ANY(%s)", [ids])
        texts = dict(cur.fetchall())
    used = 0
    for item_id in ids:
        used += tokenizer.count_tokens(texts[item_id], encoding)
        if used >= budget:
            break


def measure_floor(*, workspace_id: int, bodies: list[dict[str, Any]], budget: int) -> Floor:
    """Time the floor over the `query_vector`s of `bodies` (after 5 untimed warm-up requests), cycling
    them for at least MIN_SECONDS."""
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    vectors = [np.asarray(b["query_vector"], dtype=np.float32).tolist() for b in bodies]
    for vector in vectors[:5]:
        _one(workspace_id, vector, budget, encoding)
    postmaster = postgres_pid()
    pg_before = tree_cpu_seconds(postmaster) if postmaster else None
    cpu_before = process_cpu_seconds()
    times: list[float] = []
    timed = vectors[5:] or vectors
    began = time.perf_counter()
    while len(times) < len(timed) or time.perf_counter() - began < MIN_SECONDS:  # CPU comes in 10 ms ticks
        started = time.perf_counter()
        _one(workspace_id, timed[len(times) % len(timed)], budget, encoding)
        times.append((time.perf_counter() - started) * 1000)
    cpu = process_cpu_seconds() - cpu_before
    pg_after = tree_cpu_seconds(postmaster) if postmaster else None
    n = len(times)
    cpu_ms = None if pg_before is None or pg_after is None else (cpu + pg_after - pg_before) * 1000 / n
    return Floor(requests=n, p50_ms=statistics.median(times), cpu_ms=cpu_ms)
