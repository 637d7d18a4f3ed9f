"""Bookkeeping of scheduled tasks' runs (`PeriodicRun`), for the console's state dump.

Only tasks named in CELERY_BEAT_SCHEDULE are counted, however they were dispatched (by the
schedule or after a write). Bookkeeping never fails a task: a database error is logged and dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from apps.core.models import PeriodicRun

log = logging.getLogger(__name__)


def scheduled_tasks() -> set[str]:
    """Dotted names of the tasks the periodic schedule runs."""
    return {str(entry["task"]) for entry in settings.CELERY_BEAT_SCHEDULE.values()}


def periodic_runs_by_task() -> dict[str, PeriodicRun]:
    """Every task's record of its runs, by task name (one query)."""
    return {run.task: run for run in PeriodicRun.objects.all()}


def run_started(*, task: str) -> None:
    if task not in scheduled_tasks():
        return
    try:
        PeriodicRun.objects.update_or_create(task=task, defaults={"last_started_at": timezone.now()})
    except Exception:  # noqa: BLE001 - bookkeeping must never fail the task
        log.warning("could not record the start of %s", task, exc_info=True)


def run_finished(*, task: str, error: BaseException | None = None) -> None:
    if task not in scheduled_tasks():
        return
    try:
        PeriodicRun.objects.filter(task=task).update(
            runs=F("runs") + 1,
            failures=F("failures") + (1 if error is not None else 0),
            last_finished_at=timezone.now(),
            last_ok=error is None,
            last_error="" if error is None else f"{type(error).__name__}: {error}"[:2000],
        )
    except Exception:  # noqa: BLE001
        log.warning("could not record the end of %s", task, exc_info=True)


def connect_celery() -> None:
    """Record runs on a Celery worker too (in-process runs are recorded by apps.core.background)."""
    from celery.signals import task_postrun, task_prerun

    def started(sender: Any = None, **kwargs: Any) -> None:
        run_started(task=str(getattr(sender, "name", "")))

    def finished(sender: Any = None, state: str | None = None, retval: Any = None, **kwargs: Any) -> None:
        failed = state == "FAILURE" and isinstance(retval, BaseException)
        run_finished(task=str(getattr(sender, "name", "")), error=retval if failed else None)

    task_prerun.connect(started, weak=False, dispatch_uid="core-periodic-run-started")
    task_postrun.connect(finished, weak=False, dispatch_uid="core-periodic-run-finished")
