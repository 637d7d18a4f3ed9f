"""Celery tasks of the workspaces app."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.workspaces.models import IdempotencyKey


@shared_task
def expire_idempotency_keys() -> int:
    """Delete stored answers older than IDEMPOTENCY_KEY_HOURS; returns how many."""
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
