"""Migration 0016's bucket index is built while items are written: no write waits for the build, the
index ends valid, and the items written meanwhile are found through it."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.loader import MigrationLoader

from apps.layers import keyword_search
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant, make_tenant

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
MIGRATION = importlib.import_module("apps.layers.migrations.0016_itemsearch_bucket_lexemes")
INDEX = "itemsearch_bucket_lexeme_gin"
ROWS = 60_000


def _copying(content: str) -> str:
    """layers_item's written columns but its id, and the same list with `content` replaced by `content`."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'layers_item' "
            "AND column_name <> 'id' AND is_generated = 'NEVER' ORDER BY ordinal_position"
        )
        columns = [row[0] for row in cur.fetchall()]
    return f"({', '.join(columns)}) SELECT {', '.join(content if c == 'content' else c for c in columns)}"


@pytest.fixture
def unindexed() -> Iterator[Tenant]:
    """ROWS items (their search copies by trigger) and no bucket index, as before 0016."""
    tenant = make_tenant("buckets")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Invoices fail on Fridays.")])
    with connection.cursor() as cur:
        cur.execute("SET statement_timeout = 0")
        copying = _copying("content || ' word' || g")
        cur.execute(f"INSERT INTO layers_item {copying} FROM layers_item, generate_series(2, {ROWS}) g")
        cur.execute(f'DROP INDEX "{INDEX}"')
    yield tenant
    with connection.cursor() as cur:  # a failed build must not leave the later tests without the index
        cur.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [INDEX])
        missing = cur.fetchone() is None
    if missing:
        _migrate()


class Writer(threading.Thread):
    """Adds an item a transaction (a copy of the first with other words), timing each write."""

    def __init__(self, tenant: Tenant) -> None:
        super().__init__(daemon=True)
        self.tenant = tenant
        self.stop = threading.Event()
        self.longest = 0.0
        self.ids: list[int] = []
        self.errors: list[str] = []

    def run(self) -> None:
        copying = _copying("'Zanzibar written ' || %s")
        try:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    with transaction.atomic(), connection.cursor() as cur:
                        cur.execute(
                            f"INSERT INTO layers_item {copying} FROM layers_item WHERE workspace_id = %s "
                            "ORDER BY id LIMIT 1 RETURNING id",
                            [len(self.ids), self.tenant.workspace.pk],
                        )
                        self.ids.append(cur.fetchone()[0])
                except DatabaseError as exc:
                    self.errors.append(str(exc))
                self.longest = max(self.longest, time.monotonic() - started)
        finally:
            connection.close()


def _migrate() -> float:
    state = MigrationLoader(connection).project_state(("layers", "0015_itemsearch_workspace_item"))
    started = time.monotonic()
    with connection.schema_editor(atomic=MIGRATION.Migration.atomic) as editor:
        MIGRATION.Migration("0016_itemsearch_bucket_lexemes", "layers").apply(state, editor)
    return time.monotonic() - started


def test_the_bucket_index_is_built_while_items_are_written(unindexed: Tenant) -> None:
    writer = Writer(unindexed)
    writer.start()
    try:
        time.sleep(0.2)
        writes_before = len(writer.ids)
        took = _migrate()
        writes_during = len(writer.ids) - writes_before
        time.sleep(0.2)
    finally:
        writer.stop.set()
        writer.join(10)
    assert not writer.errors, writer.errors[:3]
    assert writes_during >= 3, (writes_during, took)
    # a plain CREATE INDEX holds every write for the whole build; this one holds none for long
    assert writer.longest < took / 3, (writer.longest, took)
    with connection.cursor() as cur:
        cur.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [INDEX])
        assert cur.fetchone() == (True,)
        cur.execute("SET enable_seqscan = off")
        cur.execute("SET enable_indexscan = off")
        cur.execute("SET enable_bitmapscan = on")
        query = f"SELECT item_id FROM layers_itemsearch WHERE {keyword_search.BUCKET_KEY} && %s::text[]"
        keys = keyword_search._buckets("zanzibar", unindexed.workspace.pk, min(writer.ids) - 1, max(writer.ids))
        cur.execute("EXPLAIN " + query, [keys])
        assert INDEX in "\n".join(row[0] for row in cur.fetchall())
        cur.execute(query, [keys])
        assert sorted(row[0] for row in cur.fetchall()) == sorted(writer.ids)
        cur.execute("RESET ALL")
    print(f"{writes_during} items written during the {took:.1f} s build, the longest write {writer.longest:.3f} s")
