"""Assembly records written after the answer, in batches, on one thread per process.

A request hands its record's fields over and returns; the writer redacts the stored query and
inserts whatever has queued up in one statement (no fsync wait). The INSERT is built here rather
than by `bulk_create`: model instances, per-field preparation and stdlib JSON cost about three times
the CPU of orjson into one hand-written INSERT (1.4 -> 0.4 ms per record measured), and the values
stored are the same (tests/assembly/test_record_writer.py compares them field by field). Inside a
transaction (a caller's atomic block, as in tests) the record is written inline instead: it belongs
to that transaction. Nothing queued is lost on a clean shutdown: the queue is drained at interpreter
exit (atexit) and at a multiprocessing worker's exit (uvicorn's workers end through
multiprocessing, which skips atexit). A crash loses at most the last batch, as the unflushed WAL
did before.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable
from multiprocessing import util as mp_util
from typing import Any

import orjson
from django.db import connection, models, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from apps.assembly.models import AssemblyRecord

log = logging.getLogger(__name__)

MAX_BATCH = 500
Prepare = Callable[[dict[str, Any]], dict[str, Any]]  # last touches off the request thread (redaction)

_FIELDS = [f for f in AssemblyRecord._meta.concrete_fields if not f.primary_key]
# One simple-protocol string (Django's client-side binding cursor): SET LOCAL and the INSERT share
# one implicit transaction, so a batch costs one round trip and no BEGIN / COMMIT of its own.
_INSERT = "SET LOCAL synchronous_commit = off; INSERT INTO {table} ({columns}) VALUES ".format(
    table=connection.ops.quote_name(AssemblyRecord._meta.db_table),
    columns=", ".join(connection.ops.quote_name(f.column) for f in _FIELDS),
)
_ROW = "(" + ", ".join(["%s"] * len(_FIELDS)) + ")"


def _value(field: models.Field[Any, Any], fields: dict[str, Any], now: Any) -> Any:
    """One column as the ORM would store it: the value given by name or attname, else the default."""
    if field.name in fields:
        value = fields[field.name]
    elif field.attname in fields:
        value = fields[field.attname]
    elif field.name == "created_at":  # auto_now_add: the time of the insert, as bulk_create sets it
        return now
    else:
        value = field.get_default()
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(field, models.JSONField):
        return Jsonb(value, dumps=orjson.dumps)
    return value


def _insert(rows: list[dict[str, Any]]) -> None:
    """Insert the records in one statement (in the caller's transaction when there is one)."""
    params = []
    for fields in rows:
        now = timezone.now()
        params += [_value(field, fields, now) for field in _FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(_INSERT + ", ".join([_ROW] * len(rows)), params)


def _tried(batch: list[tuple[dict[str, Any], Prepare]]) -> bool:
    """Insert the batch; False (logged) when that failed."""
    try:
        _insert([prepare(fields) for fields, prepare in batch])
    except Exception:
        log.exception("writing %d assembly records failed", len(batch))
        connection.close()  # a broken connection is replaced on the next try
        return False
    return True


class RecordWriter:
    """A queue of record fields and the thread that inserts them."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[dict[str, Any], Prepare]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, fields: dict[str, Any], prepare: Prepare) -> None:
        if connection.in_atomic_block:
            with transaction.atomic():  # a savepoint: a failed insert leaves the caller's transaction usable
                _insert([prepare(fields)])
            return
        self._queue.put((fields, prepare))
        if self._thread is None or not self._thread.is_alive():
            with self._lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="assembly-records", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batch)
            finally:
                if self._queue.empty():
                    connection.close()  # idle: back to the pool (or closed), so no session lingers
                for _ in batch:
                    self._queue.task_done()

    @staticmethod
    def _write(batch: list[tuple[dict[str, Any], Prepare]]) -> None:
        """Insert the batch; when that fails, each record alone, so one bad record loses only itself."""
        if _tried(batch) or len(batch) == 1:
            return
        for entry in batch:
            _tried([entry])

    def flush(self) -> None:
        """Wait until every record queued so far is written."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.join()


WRITER = RecordWriter()


def records_flush() -> None:
    """Write the queued assembly records now (readers of a just-returned trace call this first)."""
    WRITER.flush()


atexit.register(records_flush)
mp_util.Finalize(None, records_flush, exitpriority=10)
