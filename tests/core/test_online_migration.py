"""Online migrations: a batched backfill of 1M rows, run as a real `atomic = False` migration while a
thread keeps writing to the same table, finishes every row and never holds a writer for long."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection, migrations, transaction
from django.db.migrations.state import ProjectState

from apps.core.online_migration import batched_backfill, run_in_batches

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TABLE = "online_backfill_probe"
ROWS = 1_000_000
BACKFILL = f"UPDATE {TABLE} SET chars = length(body) WHERE id >= %(lo)s AND id < %(hi)s AND chars IS NULL"


@pytest.fixture
def probe() -> Iterator[None]:
    """1M rows whose new column `chars` is still empty, as after an instant AddField."""
    with connection.cursor() as cur:
        cur.execute(f"CREATE TABLE {TABLE} (id bigserial PRIMARY KEY, body text NOT NULL, chars integer)")
        cur.execute("SET statement_timeout = 0")
        cur.execute(
            f"INSERT INTO {TABLE} (body) SELECT 'row ' || g || repeat('x', g % 50) FROM generate_series(1, {ROWS}) g"
        )
    yield
    with connection.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")


class Writer(threading.Thread):
    """Writes as the deployed code would while the migration runs: updates a random old row (keeping
    `chars` right) and adds a new one, one transaction each time; records every write's latency."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                row = random.randint(1, ROWS)
                started = time.perf_counter()
                try:
                    with transaction.atomic(), connection.cursor() as cur:
                        cur.execute(
                            f"UPDATE {TABLE} SET body = body || 'w', chars = length(body) + 1 WHERE id = %s", [row]
                        )
                        cur.execute(f"INSERT INTO {TABLE} (body, chars) VALUES ('written meanwhile', 17)")
                except DatabaseError as exc:
                    self.errors.append(str(exc))
                self.latencies.append(time.perf_counter() - started)
                time.sleep(0.01)
        finally:
            connection.close()


def _migration() -> migrations.Migration:
    class Migration(migrations.Migration):
        atomic = False
        operations = [batched_backfill(table=TABLE, statement=BACKFILL, batch_size=10_000)]

    return Migration("0001_backfill_probe", "core")


def test_a_batched_backfill_of_a_million_rows_keeps_writes_fast(probe: None) -> None:
    writer = Writer()
    writer.start()
    time.sleep(0.3)  # writes before the migration starts, too
    started = time.perf_counter()
    with connection.schema_editor(atomic=False) as editor:
        _migration().apply(ProjectState(), editor)
    took = time.perf_counter() - started
    writer.stop.set()
    writer.join(10)
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*), count(*) FILTER (WHERE chars IS DISTINCT FROM length(body)) FROM {TABLE}")
        total, wrong = cur.fetchone()
    figures = f"{len(writer.latencies)} writes during {took:.1f} s, max {max(writer.latencies):.3f} s"
    assert not writer.errors, writer.errors[:3]
    assert total > ROWS and wrong == 0, (total, wrong)
    assert len(writer.latencies) >= 20, figures
    assert max(writer.latencies) < 1.0, figures
    print(figures)


def test_it_refuses_to_run_inside_a_transaction(probe: None) -> None:
    with pytest.raises(RuntimeError, match="atomic = False"), transaction.atomic():
        run_in_batches(table=TABLE, statement=BACKFILL)
