"""Consecutive LLM failures per workspace; every SUMMARY_LLM_ALERT_AFTER in a row raise an alert."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F

from apps.metrics.registry import LLM_FAILURE_ALERTS
from apps.summaries.models import ProviderHealth

log = logging.getLogger(__name__)


def failure_record(*, workspace_id: int, error: str, now: datetime) -> int:
    """Count one more failure in a row; alert (error log + metric) at every multiple of the threshold."""
    ProviderHealth.objects.get_or_create(workspace_id=workspace_id)
    ProviderHealth.objects.filter(workspace_id=workspace_id).update(
        consecutive_failures=F("consecutive_failures") + 1, last_error=error[:2000], last_failure_at=now
    )
    count = ProviderHealth.objects.values_list("consecutive_failures", flat=True).get(workspace_id=workspace_id)
    if count % settings.SUMMARY_LLM_ALERT_AFTER == 0:
        LLM_FAILURE_ALERTS.inc()
        log.error(
            "ALERT: LLM summarization failed %d times in a row for workspace %s (last error: %s)",
            count,
            workspace_id,
            error,
        )
    return count


def success_record(*, workspace_id: int) -> None:
    ProviderHealth.objects.filter(workspace_id=workspace_id, consecutive_failures__gt=0).update(consecutive_failures=0)


def failing(*, workspace_id: int, now: datetime) -> bool:
    """Whether the workspace's LLM failed within SUMMARY_LLM_FAILING_SECONDS (and has not succeeded since)."""
    since = now - timedelta(seconds=settings.SUMMARY_LLM_FAILING_SECONDS)
    return ProviderHealth.objects.filter(
        workspace_id=workspace_id, consecutive_failures__gt=0, last_failure_at__gte=since
    ).exists()
