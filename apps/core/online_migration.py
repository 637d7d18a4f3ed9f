"""Online migrations: backfill or copy a large table in batches, each its own short transaction.

One `UPDATE big SET ...` (or `INSERT INTO copy SELECT ... FROM big`) in a migration's transaction
locks every row it touches until the migration commits: at 1M items about a minute in which any
write to those rows waits (and, past DB_LOCK_TIMEOUT_MS, fails). Here the statement runs once per
range of `batch_size` keys, in autocommit, so a writer waits at most one batch (milliseconds).

    class Migration(migrations.Migration):
        atomic = False  # required: each batch commits on its own
        operations = [
            migrations.AddField(...),  # nullable, or with a db_default: instant on PostgreSQL
            batched_backfill(
                table="layers_item",
                statement="UPDATE layers_item SET chars = length(content) "
                "WHERE id >= %(lo)s AND id < %(hi)s AND chars IS NULL",
            ),
        ]

Invariant the caller keeps: rows written while the backfill runs already carry the new value (the
code that writes it is deployed first, or a trigger keeps a copy in step), because only keys up to
the table's largest when the last sweep starts are visited. A batch is idempotent (its WHERE skips
done rows), so a migration stopped halfway is run again from the start at the cost of a scan.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, migrations, transaction

log = logging.getLogger(__name__)

DEFAULT_BATCH = 5_000
LOCK_TIMEOUT_MS = 1_000  # a batch waits this long for a row a writer holds, then is tried again
# A batch meets a row a writer holds (FOR SHARE NOWAIT fails at once) and is tried again, up to this
# many times, waiting a little longer each time (up to a second): a migration can afford to wait out
# a hot row; five tries within half a second failed the migration under load.
RETRIES = 40


@dataclass(frozen=True)
class BatchRun:
    """What a batched run did: statements run, rows they reported, seconds taken."""

    batches: int
    rows: int
    seconds: float


def _max_key(cursor: Any, table: str, key: str) -> int:
    cursor.execute(f'SELECT coalesce(max("{key}"), 0) FROM "{table}"')
    return int(cursor.fetchone()[0])


def _batch(cursor: Any, using: str, statement: str, lo: int, hi: int) -> int:
    """Run one batch in its own transaction, again after a lock timeout (a writer held a row)."""
    for attempt in range(RETRIES):
        try:
            with transaction.atomic(using=using):
                cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT_MS}ms'")
                cursor.execute(statement, {"lo": lo, "hi": hi})
                return max(cursor.rowcount, 0)
        except OperationalError:
            if attempt == RETRIES - 1:
                raise
            time.sleep(min(0.05 * (attempt + 1), 1.0))
    return 0


def run_in_batches(
    *,
    table: str,
    statement: str,
    batch_size: int = DEFAULT_BATCH,
    key: str = "id",
    using: str = DEFAULT_DB_ALIAS,
    pause: float = 0.0,
) -> BatchRun:
    """Run `statement` (with `%(lo)s` and `%(hi)s`: keys lo <= key < hi) once per key range of `table`,
    each batch committed on its own, until a sweep finds no key past the last one visited.
    `pause`: seconds between batches (lets replicas and autovacuum keep up)."""
    connection = connections[using]
    if connection.in_atomic_block:
        raise RuntimeError("a batched migration commits each batch: set `atomic = False` on the migration")
    started = time.monotonic()
    batches = rows = 0
    lo = 0
    with connection.cursor() as cursor:
        while (top := _max_key(cursor, table, key)) >= lo:
            while lo <= top:
                rows += _batch(cursor, using, statement, lo, lo + batch_size)
                lo += batch_size
                batches += 1
                if batches % 100 == 0:
                    log.info("%s: %d batches, %d rows, up to key %d of %d", table, batches, rows, lo, top)
                if pause:
                    time.sleep(pause)
    return BatchRun(batches=batches, rows=rows, seconds=round(time.monotonic() - started, 2))


def batched_backfill(
    *, table: str, statement: str, batch_size: int = DEFAULT_BATCH, key: str = "id", reverse: str | None = None
) -> migrations.RunPython:
    """A migration operation running `statement` in batches (`run_in_batches`); the migration must
    set `atomic = False`. `reverse`: the statement undoing it, batched the same way (else a no-op)."""

    def runner(sql: str) -> Callable[[Any, Any], None]:
        def run(apps: Any, schema_editor: Any) -> None:
            done = run_in_batches(
                table=table, statement=sql, batch_size=batch_size, key=key, using=schema_editor.connection.alias
            )
            log.info("%s backfilled: %d rows in %d batches, %.1f s", table, done.rows, done.batches, done.seconds)

        return run

    backwards = runner(reverse) if reverse else migrations.RunPython.noop
    return migrations.RunPython(runner(statement), backwards, atomic=False)
