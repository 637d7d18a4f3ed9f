"""Periodic work of the pages: the assembly rollup (every minute, from CELERY_BEAT_SCHEDULE)."""

from __future__ import annotations

from celery import shared_task

from apps.web.rollup import rollup_catch_up


@shared_task(name="apps.web.tasks.rollup_assemblies", ignore_result=True)
def rollup_assemblies() -> int:
    """Add every settled assembly record to the per-minute rollups; idempotent (a watermark)."""
    return rollup_catch_up()
