"""Each run of a scheduled task is recorded (PeriodicRun) for the console's state dump, failures too."""

from __future__ import annotations

import pytest
from celery import shared_task
from django.test import override_settings

from apps.core import background
from apps.core.models import PeriodicRun
from apps.error_patterns.tasks import expire_error_patterns

pytestmark = pytest.mark.django_db(transaction=True)

SCHEDULE = {
    "expire": {"task": "apps.error_patterns.tasks.expire_error_patterns", "schedule": 3600.0},
    "broken": {"task": "tests.core.test_periodic_runs.broken_sweep", "schedule": 60.0},
}


@shared_task(ignore_result=True, max_retries=0)
def broken_sweep() -> None:
    raise RuntimeError("the sweep's database is gone")


@override_settings(CELERY_BEAT_SCHEDULE=SCHEDULE)
def test_it_records_each_run_of_a_scheduled_task() -> None:
    for _ in range(2):  # one after the other: a dispatch while the same task is queued merges with it
        background.dispatch(expire_error_patterns)
        assert background.wait_idle(30)
    run = PeriodicRun.objects.get(task="apps.error_patterns.tasks.expire_error_patterns")
    assert run.runs == 2
    assert run.failures == 0
    assert run.last_ok is True
    assert run.last_started_at is not None and run.last_finished_at is not None
    assert run.last_finished_at >= run.last_started_at


@override_settings(CELERY_BEAT_SCHEDULE=SCHEDULE)
def test_it_records_a_failed_run_with_its_error() -> None:
    background.dispatch(broken_sweep)
    assert background.wait_idle(30)
    run = PeriodicRun.objects.get(task="tests.core.test_periodic_runs.broken_sweep")
    assert (run.runs, run.failures, run.last_ok) == (1, 1, False)
    assert run.last_error == "RuntimeError: the sweep's database is gone"


@override_settings(CELERY_BEAT_SCHEDULE={})
def test_it_leaves_tasks_outside_the_schedule_alone() -> None:
    background.dispatch(expire_error_patterns)
    assert background.wait_idle(30)
    assert not PeriodicRun.objects.exists()
