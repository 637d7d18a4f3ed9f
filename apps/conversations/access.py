"""Access tracking of served items, off the hot path.

A request only adds the served ids to an in-process buffer; one background task per
ITEM_ACCESS_FLUSH_SECONDS (a setting, 1 s by default) writes the whole buffer in a single upsert
(apps/conversations/services.py). Written
per request, the upsert and its commit cost about 1 ms of server CPU each (PostgreSQL most of it);
a second's worth of requests in one statement costs a fraction of that per request. Nothing is
lost on a clean exit (apps/core/background.py runs the pending flush). Under Celery the
ids travel with the task instead, since the worker is another process. Never one query per item,
never inside the request.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from apps.core import background

_lock = threading.Lock()
_buffer: Counter[int] = Counter()
_latest: datetime | None = None
_scheduled = False


def note_served(item_ids: Iterable[int], *, now: datetime | None = None) -> None:
    """Count one access for each id (repeats count again), written later in one batch."""
    global _latest, _scheduled
    ids = [int(i) for i in item_ids]
    if not ids:
        return
    now = now or timezone.now()
    from apps.conversations.tasks import flush_item_access, record_item_access

    if settings.BACKGROUND_MODE == "celery":
        background.dispatch(record_item_access, dict(Counter(ids)), now.isoformat())
        return
    with _lock:
        _buffer.update(ids)
        _latest = now if _latest is None or now > _latest else _latest
        if _scheduled:
            return
        _scheduled = True
    background.dispatch_later(flush_item_access, settings.ITEM_ACCESS_FLUSH_SECONDS)  # accesses show this much later


def take_buffer() -> tuple[dict[int, int], datetime | None]:
    """The accesses noted since the last flush, emptying the buffer."""
    global _latest, _scheduled
    with _lock:
        counts, at = dict(_buffer), _latest
        _buffer.clear()
        _latest, _scheduled = None, False
    return counts, at
