"""Assembly records written after the answer, in batches, on one thread per process.

A request hands its record's fields over and returns; the writer redacts the stored query and
inserts whatever has queued up in one `bulk_create` (no fsync wait). Inside a transaction (a
caller's atomic block, as in tests) the record is written inline instead: it belongs to that
transaction. Nothing queued is lost on a clean shutdown: the queue is drained at interpreter
exit (atexit) and at a multiprocessing worker's exit (uvicorn's workers end through
multiprocessing, which skips atexit). A crash loses at most the last batch, as the unflushed
WAL did before.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable
from multiprocessing import util as mp_util
from typing import Any

from django.db import connection, transaction

from apps.assembly.models import AssemblyRecord

log = logging.getLogger(__name__)

MAX_BATCH = 500
Prepare = Callable[[dict[str, Any]], dict[str, Any]]  # last touches off the request thread (redaction)


def _insert(rows: list[dict[str, Any]]) -> None:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        AssemblyRecord.objects.bulk_create([AssemblyRecord(**fields) for fields in rows])


class RecordWriter:
    """A queue of record fields and the thread that inserts them."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[dict[str, Any], Prepare]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, fields: dict[str, Any], prepare: Prepare) -> None:
        if connection.in_atomic_block:
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
                _insert([prepare(fields) for fields, prepare in batch])
            except Exception:
                log.exception("writing %d assembly records failed", len(batch))
                connection.close()  # a broken connection is replaced on the next batch
            finally:
                if self._queue.empty():
                    connection.close()  # idle: back to the pool (or closed), so no session lingers
                for _ in batch:
                    self._queue.task_done()

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
