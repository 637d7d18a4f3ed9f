"""Loading a large bench workspace: rows streamed by binary COPY in chunks, indexes built after the load.

At 1,000,000 items the ORM path (1M model instances, then batched INSERTs into a table whose
GIN, btree and HNSW indexes grow row by row) takes hours and gigabytes; a binary COPY of
generated chunks into an index-free table, then one build per index, takes minutes and holds one
chunk at a time. The table's secondary indexes cover every workspace, so other workspaces in the
same database search without them meanwhile: seed a benchmark database. The items' keyword-search
copies (layers_itemsearch, filled by a trigger on layers_item: one INSERT ... SELECT per COPY) are
loaded the same way, their GIN index dropped and built after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from django.db import connection
from pgvector.psycopg import register_vector  # type: ignore[import-untyped]

from apps.layers.models import Item, ItemSearch

# The columns COPY fills; every NOT NULL column without a database default is here.
COLUMNS = (
    "workspace_id", "layer_id", "kind", "type", "title", "content", "token_count", "content_hash", "embedding",
    "embedding_model", "importance", "pinned", "metadata", "created_at", "updated_at", "role", "task_ids",
    "confidence", "priority", "group_id", "agent_types", "source_refs", "helpfulness", "seen_count",
    "merged_external_ids", "mergeable",
)  # fmt: skip
TABLE = Item._meta.db_table
# The tables a COPY into layers_item fills: the items, and their keyword-search copies (by trigger).
LOADED_TABLES = (TABLE, ItemSearch._meta.db_table)
# The primary keys stay (identity values are checked as they come).
KEPT_INDEXES = ("layers_item_pkey", "layers_itemsearch_pkey")


def _connect() -> psycopg.Connection[Any]:
    """A connection of its own, so the vector adapters registered on it do not change Django's."""
    params = dict(connection.get_connection_params())
    params.pop("cursor_factory", None)
    params.pop("context", None)
    conn = psycopg.connect(**params, autocommit=True)
    register_vector(conn)
    return conn


def _index_definitions(cur: psycopg.Cursor[Any]) -> list[tuple[str, str]]:
    cur.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ANY(%s)",
        [list(LOADED_TABLES)],
    )
    return [(name, definition) for name, definition in cur.fetchall() if name not in KEPT_INDEXES]


def maintenance_memory(items: int) -> str:
    """Room for the whole HNSW graph (vector + ~1 kB of links and bookkeeping a row): a build that spills is several
    times slower. At least 1 GB, at most 8 GB."""
    megabytes = min(8192, max(1024, items * 3 // 1000))
    return f"{megabytes}MB"


def copy_rows(*, chunks: Iterator[Sequence[tuple[Any, ...]]], items: int, phase: Callable[[str], None]) -> None:
    """COPY the rows of `chunks` (tuples in COLUMNS order) with the secondary indexes dropped, then build them.

    One transaction: a load that fails or is killed leaves the table and its indexes as they were.
    """
    with _connect() as conn, conn.cursor() as cur:
        with conn.transaction():
            cur.execute(
                "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass", [Item._meta.db_table]
            )
            oids = dict(cur.fetchall())
            indexes = _index_definitions(cur)
            for name, _ in indexes:
                cur.execute(f'DROP INDEX "{name}"')
            phase(f"drop {len(indexes)} indexes")
            sql = f"COPY {Item._meta.db_table} ({', '.join(COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
            with cur.copy(sql) as copy:
                copy.set_types([oids[column] for column in COLUMNS])
                for chunk in chunks:
                    for row in chunk:
                        copy.write_row(row)
            phase(f"COPY {items:,} rows")
            cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred foreign-key checks run here, before the builds
            phase("foreign-key checks")
            cur.execute(f"SET LOCAL maintenance_work_mem = '{maintenance_memory(items)}'")
            for name, definition in indexes:
                cur.execute(definition)
                phase(f"index {name}")
        phase("commit")
        cur.execute(f"ANALYZE {', '.join(LOADED_TABLES)}")
        phase("analyze")
