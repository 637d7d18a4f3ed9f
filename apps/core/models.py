"""Rows the infrastructure keeps about itself: the last run of each periodic task."""

from __future__ import annotations

from django.db import models


class PeriodicRun(models.Model):
    """The latest run of one scheduled task (CELERY_BEAT_SCHEDULE), whoever dispatched it.

    Written by `apps.core.periodic_runs` around the task body, in-process and on a Celery worker
    alike; the console's state dump shows it beside the schedule.
    """

    task = models.CharField(max_length=200, unique=True)
    runs = models.PositiveBigIntegerField(default=0)
    failures = models.PositiveBigIntegerField(default=0)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_ok = models.BooleanField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return self.task


class ContentVersion(models.Model):
    """A workspace's content version (apps/core/versions.py): one more after every committed change.

    In PostgreSQL rather than the cache, so every process of every instance reads the same number
    whether Redis is there or not. `workspace_id` names the workspace without a foreign key: core
    sits below the workspaces app.
    """

    workspace_id = models.BigIntegerField(primary_key=True)
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"workspace {self.workspace_id}: {self.version}"
