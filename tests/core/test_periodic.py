"""The in-process beat: CELERY_BEAT_SCHEDULE run on a thread of one process, for `make run` without Celery."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from apps.core import background
from apps.core.periodic import due_entries, start_inprocess_beat
from apps.error_patterns.models import ErrorPattern
from tests.support.tenants import make_tenant


def test_an_entry_is_due_at_start_then_once_per_interval() -> None:
    schedule = {"often": {"task": "x", "schedule": 10.0}, "rarely": {"task": "y", "schedule": 60.0}}
    next_due: dict[str, float] = {}
    assert [name for name, _ in due_entries(schedule, next_due, 100.0)] == ["often", "rarely"]
    assert due_entries(schedule, next_due, 105.0) == []
    assert [name for name, _ in due_entries(schedule, next_due, 110.0)] == ["often"]
    assert [name for name, _ in due_entries(schedule, next_due, 160.0)] == ["often", "rarely"]


@pytest.mark.django_db(transaction=True)
def test_the_beat_thread_runs_a_real_task_from_its_start(tmp_path: Path) -> None:
    tenant = make_tenant("beat")
    long_ago = timezone.now() - timedelta(days=settings.ERROR_PATTERN_TTL_DAYS + 1)
    ErrorPattern.objects.create(
        workspace=tenant.workspace,
        signature="old",
        error_excerpt="old",
        solution="fix",
        first_seen=long_ago,
        last_seen=long_ago,
    )
    stop = threading.Event()
    schedule = {"expire": {"task": "apps.error_patterns.tasks.expire_error_patterns", "schedule": 3600.0}}
    try:
        assert start_inprocess_beat(lock_path=tmp_path / "beat.lock", schedule=schedule, stop=stop)
        deadline = time.monotonic() + 30
        while ErrorPattern.objects.filter(workspace=tenant.workspace).exists() and time.monotonic() < deadline:
            background.wait_idle(5)
            time.sleep(0.1)
        assert not ErrorPattern.objects.filter(workspace=tenant.workspace).exists()
    finally:
        stop.set()
        background.wait_idle(30)


def test_only_one_process_runs_the_schedule(tmp_path: Path) -> None:
    lock = tmp_path / "beat.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl, time; f = open({str(lock)!r}, 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('locked', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert start_inprocess_beat(lock_path=lock, schedule={}) is False
    finally:
        holder.kill()
        holder.wait()
    stop = threading.Event()
    assert start_inprocess_beat(lock_path=lock, schedule={}, stop=stop)  # free once the holder is gone
    stop.set()
