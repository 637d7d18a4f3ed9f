"""Patterns not seen for the TTL (90 days by default) are removed by a periodic task."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from apps.error_patterns.models import ErrorPattern
from apps.error_patterns.services import attempt_record, patterns_expire
from apps.error_patterns.tasks import expire_error_patterns
from apps.layers.models import Layer
from tests.support.tenants import Tenant


def seen(tenant: Tenant, signature: str, days_ago: float) -> ErrorPattern:
    when = timezone.now() - timedelta(days=days_ago)
    return ErrorPattern.objects.create(
        workspace=tenant.workspace,
        signature=signature,
        error_excerpt=signature,
        solution="fix",
        first_seen=when,
        last_seen=when,
    )


def test_it_removes_patterns_not_seen_for_the_ttl_and_keeps_the_rest(tenant: Tenant) -> None:
    old = seen(tenant, "old error", 91)
    fresh = seen(tenant, "fresh error", 89)
    assert patterns_expire() == 1
    assert not ErrorPattern.objects.filter(pk=old.pk).exists()
    assert ErrorPattern.objects.filter(pk=fresh.pk).exists()


def test_time_is_injectable(tenant: Tenant) -> None:
    pattern = seen(tenant, "some error", 0)
    assert patterns_expire(now=timezone.now() + timedelta(days=89)) == 0
    assert patterns_expire(now=timezone.now() + timedelta(days=91)) == 1
    assert not ErrorPattern.objects.filter(pk=pattern.pk).exists()


@override_settings(ERROR_PATTERN_TTL_DAYS=7)
def test_the_ttl_is_configurable_and_the_task_applies_it(tenant: Tenant) -> None:
    seen(tenant, "a week old", 8)
    seen(tenant, "yesterday", 1)
    assert expire_error_patterns.run() == 1
    assert list(ErrorPattern.objects.values_list("signature", flat=True)) == ["yesterday"]


def test_a_new_failure_with_the_signature_counts_as_seen(tenant: Tenant, session: Layer) -> None:
    pattern = seen(tenant, "valueerror: bad value <n>", 80)
    attempt_record(workspace=tenant.workspace, layer=session, outcome="failed", error="ValueError: bad value 17")
    assert patterns_expire(now=timezone.now() + timedelta(days=30)) == 0
    pattern.refresh_from_db()
    assert pattern.last_seen > timezone.now() - timedelta(minutes=1)


def test_beat_runs_the_sweep() -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "apps.error_patterns.tasks.expire_error_patterns" in tasks
