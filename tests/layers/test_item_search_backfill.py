"""Migration 0009's batched copy of layers_item into layers_itemsearch: run as a real `atomic = False`
migration while a thread inserts, updates and deletes items, it ends equal to a direct copy."""

from __future__ import annotations

import importlib
import random
import threading
import time
from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection, migrations, transaction
from django.db.migrations.state import ProjectState

from apps.core.online_migration import batched_backfill
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant, make_tenant

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
MIGRATION = importlib.import_module("apps.layers.migrations.0009_item_search_table")
ROWS = 60_000
BATCH = 500  # many batches, so writes land before, inside and after the batch being copied
DIRECT = f"SELECT id, {MIGRATION.COPIED}, length(search_vector) FROM layers_item"
COPIED = f"SELECT item_id, {MIGRATION.COPIED}, length FROM layers_itemsearch"


def _columns() -> str:
    """layers_item's written columns but its id (search_vector is generated from title and content)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'layers_item' "
            "AND column_name <> 'id' AND is_generated = 'NEVER' ORDER BY ordinal_position"
        )
        return ", ".join(f'"{row[0]}"' for row in cur.fetchall())


@pytest.fixture
def uncopied() -> Iterator[Tenant]:
    """ROWS items whose copies are gone, as when 0009 has put its triggers in place and not yet copied."""
    tenant = make_tenant("backfill")
    items_create(
        layer=tenant.root,
        items=[ItemInput(kind="memory", type="fact", content="Invoices fail on Fridays.", confidence=0.5)],
    )
    columns = _columns()
    values = columns.replace('"content"', "\"content\" || ' word' || g").replace(
        '"kind"', "(ARRAY['memory','message'])[1 + g % 2]"
    )
    with connection.cursor() as cur:
        cur.execute("SET statement_timeout = 0")
        cur.execute(
            f"INSERT INTO layers_item ({columns}) SELECT {values} FROM layers_item, generate_series(2, {ROWS}) g"
        )
        cur.execute("DELETE FROM layers_itemsearch")
    yield tenant


class Writer(threading.Thread):
    """Writes as the deployed code would while the copy runs, one transaction each: adds an item, changes
    an item's text and filter columns, deletes another; the changed and deleted items are mostly just
    past the copy's front (in the batch being copied, where a lost write would hide), else anywhere."""

    def __init__(self, columns: str, lowest: int, highest: int) -> None:
        super().__init__(daemon=True)
        self.columns, self.lowest, self.highest = columns, lowest, highest
        self.stop = threading.Event()
        self.writes = 0
        self.errors: list[str] = []

    def run(self) -> None:
        rng = random.Random(22)
        try:
            while not self.stop.is_set():
                try:
                    with transaction.atomic(), connection.cursor() as cur:
                        cur.execute("SELECT max(item_id) FROM layers_itemsearch WHERE item_id <= %s", [self.highest])
                        front = cur.fetchone()[0] or self.lowest
                        row, gone = (
                            (front + rng.randint(1, BATCH), front + rng.randint(1, BATCH))
                            if rng.random() < 0.8
                            else (rng.randint(self.lowest, self.highest), rng.randint(self.lowest + 1, self.highest))
                        )
                        cur.execute(
                            f"INSERT INTO layers_item ({self.columns}) SELECT {self.columns} FROM layers_item "
                            "WHERE id = %s",
                            [self.lowest],
                        )
                        cur.execute(
                            "UPDATE layers_item SET content = content || ' changed', kind = 'package', "
                            "confidence = 0.9, group_id = 'moved' WHERE id = %s",
                            [row],
                        )
                        cur.execute("DELETE FROM layers_item WHERE id = %s", [max(gone, self.lowest + 1)])
                except DatabaseError as exc:
                    self.errors.append(str(exc))
                self.writes += 1
        finally:
            connection.close()


def _run_copy() -> None:
    class Migration(migrations.Migration):
        atomic = False
        operations = [batched_backfill(table="layers_item", statement=MIGRATION.COPY, batch_size=BATCH)]

    with connection.schema_editor(atomic=False) as editor:
        Migration("0009_copy", "layers").apply(ProjectState(), editor)


def _differences() -> tuple[int, int, int]:
    """Copies that differ from or lack their item, items without their copy, and all items."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM ({COPIED} EXCEPT {DIRECT}) wrong")
        (wrong,) = cur.fetchone()
        cur.execute(f"SELECT count(*) FROM ({DIRECT} EXCEPT {COPIED}) missing")
        (missing,) = cur.fetchone()
        cur.execute("SELECT count(*) FROM layers_item")
        (total,) = cur.fetchone()
    return wrong, missing, total


def test_the_batched_copy_equals_a_direct_copy(uncopied: Tenant) -> None:
    assert _differences()[1] == ROWS  # nothing copied yet
    _run_copy()
    assert _differences() == (0, 0, ROWS)


def test_items_written_during_the_copy_end_up_copied_as_they_are(uncopied: Tenant) -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT min(id), max(id) FROM layers_item")
        lowest, highest = cur.fetchone()
    writer = Writer(_columns(), lowest, highest)
    writer.start()
    try:
        time.sleep(0.2)  # writes before the copy starts, too
        _run_copy()
        time.sleep(0.2)  # and after it
    finally:  # a failed copy must not leave the writer writing into the next test's database
        writer.stop.set()
        writer.join(10)
    assert not writer.errors, writer.errors[:3]
    assert writer.writes >= 20, writer.writes
    wrong, missing, total = _differences()
    assert (wrong, missing) == (0, 0), (wrong, missing, total, writer.writes)
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM layers_item WHERE group_id = 'moved'")
        (moved,) = cur.fetchone()
    assert moved >= 10  # the updates did change rows, and their copies followed
    print(f"{writer.writes} write transactions during the copy of {ROWS:,} items")
