"""Celery tasks of the error_patterns app: they call one service."""

from __future__ import annotations

from celery import shared_task

from apps.error_patterns.services import patterns_expire


@shared_task(ignore_result=True, max_retries=0)
def expire_error_patterns() -> int:
    """Remove patterns not seen for settings.ERROR_PATTERN_TTL_DAYS (idempotent; beat runs it hourly)."""
    return patterns_expire()
