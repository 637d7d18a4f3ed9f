"""The one module that talks to pgvector: availability, the HNSW index, and nearest-neighbour search.

Filters (workspace, layers, kinds, types, dates) go into the same SQL statement as the distance
ordering, so the index scan and the filters are one query. A small scope (a conversation, a
session, a project of up to EXACT_SEARCH_MAX_ITEMS) is searched exactly instead: the HNSW graph
spans every item of the database, and a filter that passes few of them makes its scan long and its
answer approximate; a mid-size scope walks the graph with a wider candidate list (WIDE_EF_SEARCH).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

import numpy as np
from django.db import connection as default_connection
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.core import embeddings
from apps.core.replica_router import read_connection
from apps.layers.filters import ItemFilters

log = logging.getLogger(__name__)

HNSW_INDEX = "item_embedding_hnsw_cosine"


_available: dict[tuple[str, ...], bool] = {}  # per database, for the process's life

# The strategy by the scope's size (`search_strategy`), from `bench_assembly --scope-curve` at 100k items
# (recall@50 against exact search and p50 of the search, bench vectors / LoCoMo vectors, load 2.4-3.1 on
# 2 cores). Exact search costs ~1.4-2.1 ms per 1,000 items: 4.7 / 9.6 ms at 4,849 items, 13.9 / 21.2 at
# 10,183, 20.8 / 30.8 at 15,033, 67.6 / 101.9 at 49,950. The iterative HNSW walk (settings'
# ef_search 200) is no faster below ~5,000 (9.5 / 9.0 ms at 4,849) and finds 0.58-0.64 of the top 50
# on the bench's near-duplicate clusters at every size from 4,849 up (0.999-1.0 on LoCoMo's). So: exact
# while it stays within ~25 ms, then the walk with WIDE_EF_SEARCH candidates (at 15,033-49,950 items
# 0.70-0.73 on bench, 1.0 on LoCoMo, for 6.4-9.3 ms against 1.7-4.6), then the settings' ef_search
# past WIDE_SEARCH_MAX_ITEMS, whose whole-workspace walk ef_search was tuned for (--ef-search-curve).
# Filtered HNSW without the iterative scan (VectorStrategy.HNSW) was never better: 0.17-0.63 at
# 4,849-15,033 items, where the filter leaves too few of its candidates.
EXACT_SEARCH_MAX_ITEMS = 12_000
WIDE_SEARCH_MAX_ITEMS = 50_000
WIDE_EF_SEARCH = 800
SCOPE_COUNT_LIMIT = WIDE_SEARCH_MAX_ITEMS + 1  # a scope's count stops here: past it, the size decides nothing
SCOPE_SIZE_SECONDS = 60.0  # how long a scope's size is remembered (per process)
MAX_REMEMBERED_SCOPES = 1_024
_scope_sizes: dict[ItemFilters, tuple[float, int]] = {}  # filters → (when counted, size up to the limit)


def _database(conn: BaseDatabaseWrapper) -> tuple[str, ...]:
    settings = conn.settings_dict
    return (conn.alias, str(settings["HOST"]), str(settings["PORT"]), str(settings["NAME"]))


def vector_available(connection: BaseDatabaseWrapper | None = None) -> bool:
    """Whether the pgvector extension is installed in this database (asked once per process and database:
    under ASGI every request has a connection wrapper of its own)."""
    conn = connection or default_connection
    cached = _available.get(_database(conn))
    if cached is None:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            cached = cur.fetchone() is not None
        _available[_database(conn)] = cached
    return cached


def install_extension(connection: BaseDatabaseWrapper) -> bool:
    """Create the extension if the server offers it; returns whether vectors are available."""
    with connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cur.fetchone() is None:
            log.warning("pgvector is not available on this PostgreSQL: keyword search only")
            _available[_database(connection)] = False
            return False
        cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
    _available[_database(connection)] = True
    return True


def create_hnsw_index(connection: BaseDatabaseWrapper) -> None:
    """The cosine HNSW index on item embeddings (only where pgvector exists)."""
    if not vector_available(connection):
        return
    with connection.cursor() as cur:
        cur.execute(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON layers_item USING hnsw (embedding vector_cosine_ops)")


def drop_hnsw_index(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cur:
        cur.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")


def parse_db_vector(value: Any) -> np.ndarray | None:
    """A float32 array from what the driver returns: pgvector text, a list, or an array."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value.astype(np.float32, copy=False)
    if isinstance(value, str):
        return np.array([float(x) for x in value.strip("[]").split(",") if x], dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


def to_db_vector(value: Any, connection: BaseDatabaseWrapper) -> Any:
    """The parameter the column takes: pgvector text literal or a float list for `real[]`."""
    if value is None:
        return None
    if vector_available(connection):
        return vector_literal(value)
    return [float(x) for x in (value.tolist() if isinstance(value, np.ndarray) else value)]


@lru_cache(maxsize=8)
def _float32_format(dimensions: int) -> str:
    return "[" + ",".join(["%.9g"] * dimensions) + "]"


def vector_literal(value: Any) -> str:
    """The pgvector text literal of a vector.

    pgvector keeps float32 and parses each number with strtof, so a float32 array is written with
    9 significant digits (enough for any float32 to read back as itself, and 3x faster to format
    than `repr` of each float); anything else as the shortest repr of each float, as before (its
    rounding to float32 is pgvector's).
    """
    if isinstance(value, np.ndarray) and value.dtype == np.float32 and value.ndim == 1:
        return _float32_format(len(value)) % tuple(value.tolist())
    floats = value.tolist() if isinstance(value, np.ndarray) else value
    return "[" + ",".join([repr(float(x)) for x in floats]) + "]"


class VectorStrategy(StrEnum):
    """How a scope is searched: every item measured, or a walk of the HNSW graph filtered by the scope."""

    EXACT = "exact"  # every embedded item of the scope measured: recall 1, cost grows with the scope
    HNSW = "hnsw"  # filtered HNSW, no iterative scan: at most ef_search candidates, before the filter
    ITERATIVE = "iterative"  # filtered HNSW with pgvector's iterative scan: walks on until `limit` rows pass
    WIDE = "wide"  # the iterative scan with WIDE_EF_SEARCH candidates instead of settings.HNSW_EF_SEARCH


def search_strategy(*, scope_size: int) -> VectorStrategy:
    """The strategy for a scope of `scope_size` embedded items (see EXACT_SEARCH_MAX_ITEMS)."""
    if scope_size <= EXACT_SEARCH_MAX_ITEMS:
        return VectorStrategy.EXACT
    return VectorStrategy.WIDE if scope_size <= WIDE_SEARCH_MAX_ITEMS else VectorStrategy.ITERATIVE


# What a strategy sets for its statement, in a transaction of its own (connections start with the
# iterative scan on and settings.HNSW_EF_SEARCH).
_SETTING = {
    VectorStrategy.HNSW: "SET LOCAL hnsw.iterative_scan = off",
    VectorStrategy.WIDE: f"SET LOCAL hnsw.ef_search = {WIDE_EF_SEARCH}",
}


@dataclass(frozen=True)
class VectorHit:
    item_id: int
    similarity: float


def nearest_items(
    *, filters: ItemFilters, query_vector: np.ndarray, limit: int, strategy: VectorStrategy | None = None
) -> list[VectorHit]:
    """Items nearest to the query by cosine similarity, filtered in the same statement; only vectors of
    the configured model (`embeddings.model_label`) are compared with it. `strategy`: by the scope's
    size (`search_strategy`) unless given (the bench measures each).

    Returns [] when pgvector is unavailable: the caller falls back to keyword search.
    """
    if not vector_available() or not filters.layer_ids:
        return []
    where, params = filters.sql()
    # Only the current model's vectors: after a model change the items not re-embedded yet are
    # found by keyword search alone, never by comparing the query with another model's vector.
    where.append("embedding IS NOT NULL")
    where.append("embedding_model = %s")
    params = [*params, embeddings.model_label()]
    conditions = " AND ".join(where)
    if strategy is None:
        strategy = search_strategy(scope_size=_scope_size(filters, conditions, params))
    if strategy is VectorStrategy.EXACT:
        # OFFSET 0 keeps the ORDER BY out of the scan: every item in scope is measured.
        sql = (
            "SELECT id, 1 - distance FROM (SELECT id, embedding <=> %s::vector AS distance FROM layers_item "
            f"WHERE {conditions} OFFSET 0) scope ORDER BY distance LIMIT %s"
        )
    else:
        # The query vector is sent once (it is 4-8 KB of text, quoted and parsed on every send); the
        # distance is ordered on by its alias, which still walks the HNSW index.
        sql = (
            "SELECT id, 1 - distance FROM (SELECT id, embedding <=> %s::vector AS distance FROM layers_item "
            f"WHERE {conditions} ORDER BY distance LIMIT %s) nearest"
        )
    args = [vector_literal(query_vector), *params, limit]
    conn = read_connection()  # a caught-up replica within replica_reads
    if strategy in _SETTING:
        with transaction.atomic(using=conn.alias), conn.cursor() as cur:
            cur.execute(_SETTING[strategy])
            cur.execute(sql, args)
            rows = cur.fetchall()
    else:
        with conn.cursor() as cur:
            cur.execute(sql, args)
            rows = cur.fetchall()
    hits = [VectorHit(item_id=row[0], similarity=float(row[1])) for row in rows]
    # relaxed_order may return rows slightly out of order; the caller ranks anyway, but keep it sorted.
    return sorted(hits, key=lambda h: -h.similarity)


def _scope_size(filters: ItemFilters, conditions: str, params: list[Any]) -> int:
    """How many embedded items pass the filters, counted up to SCOPE_COUNT_LIMIT (at most once a
    SCOPE_SIZE_SECONDS per scope and process)."""
    now = time.monotonic()
    known = _scope_sizes.get(filters)
    if known is not None and now - known[0] < SCOPE_SIZE_SECONDS:
        return known[1]
    with read_connection().cursor() as cur:
        cur.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM layers_item WHERE {conditions} LIMIT %s) scope",
            [*params, SCOPE_COUNT_LIMIT],
        )
        size = int(cur.fetchone()[0])
    if len(_scope_sizes) >= MAX_REMEMBERED_SCOPES:
        _scope_sizes.clear()
    _scope_sizes[filters] = (now, size)
    return size


# Centring (`centred_query`). A model's embeddings share a common direction (e5 puts every pair of
# texts above ~0.7 cosine), so what a greeting or a short reply has in common with every text makes it
# look close to any question. Taking the scope's mean embedding out of the query (cos(q - mean, d)
# orders as cos(q, d) - mean . d: each item's similarity less its similarity to the average item)
# leaves what the question asks about. On the LoCoMo development set (README, Benchmarks) the whole
# mean paid more than half or three quarters of it, at every budget. A scope of a few items makes a
# poor estimate of the mean, and with a handful every item is found anyway: those are not centred.
CENTRE_WEIGHT = 1.0
CENTRE_MIN_ITEMS = 100
CENTRE_SAMPLE = 5_000  # items averaged at most: an estimate of the mean is enough
_centroids: dict[ItemFilters, tuple[float, np.ndarray | None]] = {}


def scope_centroid(filters: ItemFilters) -> np.ndarray | None:
    """The mean of the scope's embeddings (None: fewer than CENTRE_MIN_ITEMS), read at most once a
    SCOPE_SIZE_SECONDS per scope and process, over at most CENTRE_SAMPLE items."""
    now = time.monotonic()
    known = _centroids.get(filters)
    if known is not None and now - known[0] < SCOPE_SIZE_SECONDS:
        return known[1]
    where, params = filters.sql()
    where += ["embedding IS NOT NULL", "embedding_model = %s"]
    with read_connection().cursor() as cur:
        cur.execute(
            f"SELECT count(*), avg(embedding) FROM (SELECT embedding FROM layers_item WHERE {' AND '.join(where)} "
            "LIMIT %s) scope",
            [*params, embeddings.model_label(), CENTRE_SAMPLE],
        )
        count, mean = cur.fetchone()
    centroid = parse_db_vector(mean) if count >= CENTRE_MIN_ITEMS else None
    if len(_centroids) >= MAX_REMEMBERED_SCOPES:
        _centroids.clear()
    _centroids[filters] = (now, centroid)
    return centroid


def centred_query(*, filters: ItemFilters, query_vector: np.ndarray) -> np.ndarray:
    """The unit query with CENTRE_WEIGHT times the scope's mean embedding taken away (unit length)."""
    if not CENTRE_WEIGHT:
        return query_vector
    centroid = scope_centroid(filters)
    if centroid is None:
        return query_vector
    q = query_vector / (float(np.linalg.norm(query_vector)) or 1.0)
    out = q - CENTRE_WEIGHT * centroid
    norm = float(np.linalg.norm(out))
    return (out / norm).astype(np.float32) if norm > 0 else query_vector
