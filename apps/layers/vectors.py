"""The one module that talks to pgvector: availability, the HNSW index, and nearest-neighbour search.

Filters (workspace, layers, kinds, types, dates) go into the same SQL statement as the distance
ordering, so the index scan and the filters are one query. A small scope (a conversation, a
session) is searched exactly instead: the HNSW graph spans every item of the database, and a
filter that passes few of them makes its scan long and its answer approximate.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from django.db import connection as default_connection
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.core import embeddings
from apps.core.replica_router import read_connection
from apps.layers.filters import ItemFilters

log = logging.getLogger(__name__)

HNSW_INDEX = "item_embedding_hnsw_cosine"


_available: dict[tuple[str, ...], bool] = {}  # per database, for the process's life

# Scopes of at most this many embedded items are searched exactly. At 100k bench items a session's
# 3,500 took 9 ms of PostgreSQL CPU exactly and 24 ms by HNSW (recall@50 0.74 against exact), a
# conversation's 7,900 took 13 ms and 8 ms (recall 0.64); the whole workspace by HNSW 2.4 ms.
EXACT_SEARCH_MAX_ITEMS = 5_000
SCOPE_SIZE_SECONDS = 60.0  # how long a scope's size class is remembered (per process)
MAX_REMEMBERED_SCOPES = 1_024
_small_scopes: dict[ItemFilters, tuple[float, bool]] = {}  # filters → (when counted, small)


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


@dataclass(frozen=True)
class VectorHit:
    item_id: int
    similarity: float


def nearest_items(*, filters: ItemFilters, query_vector: np.ndarray, limit: int) -> list[VectorHit]:
    """Items nearest to the query by cosine similarity, filtered in the same statement; only vectors of
    the configured model (`embeddings.model_label`) are compared with it.

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
    if _small_scope(filters, conditions, params):
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
    with read_connection().cursor() as cur:  # a caught-up replica within replica_reads
        cur.execute(sql, [vector_literal(query_vector), *params, limit])
        hits = [VectorHit(item_id=row[0], similarity=float(row[1])) for row in cur.fetchall()]
    # relaxed_order may return rows slightly out of order; the caller ranks anyway, but keep it sorted.
    return sorted(hits, key=lambda h: -h.similarity)


def _small_scope(filters: ItemFilters, conditions: str, params: list[Any]) -> bool:
    """Whether at most EXACT_SEARCH_MAX_ITEMS embedded items pass the filters (counted at most once a
    SCOPE_SIZE_SECONDS per scope and process; the count stops past the limit)."""
    now = time.monotonic()
    known = _small_scopes.get(filters)
    if known is not None and now - known[0] < SCOPE_SIZE_SECONDS:
        return known[1]
    with read_connection().cursor() as cur:
        cur.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM layers_item WHERE {conditions} LIMIT %s) scope",
            [*params, EXACT_SEARCH_MAX_ITEMS + 1],
        )
        small = bool(cur.fetchone()[0] <= EXACT_SEARCH_MAX_ITEMS)
    if len(_small_scopes) >= MAX_REMEMBERED_SCOPES:
        _small_scopes.clear()
    _small_scopes[filters] = (now, small)
    return small
