"""Celery tasks of the assembly app: they take ids and JSON and call one service; and the periodic
rollup of the records for the dashboard (every minute, from CELERY_BEAT_SCHEDULE)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from apps.assembly.params import params_from_json
from apps.assembly.rollup.services import rollup_catch_up
from apps.assembly.services import context_warm
from apps.assembly.services.retention import records_expire


@shared_task(ignore_result=True, max_retries=0)
def warm_context(workspace_id: int, params: dict[str, Any], trace: dict[str, str] | None = None) -> None:
    """Finish a context that passed its deadline, so the next identical request gets it whole
    (`trace`: the request's trace context, when tracing is on)."""
    context_warm(workspace_id=workspace_id, params=params_from_json(params), trace=trace)


@shared_task(ignore_result=True)
def rollup_assemblies() -> int:
    """Add every settled assembly record to the per-bucket rollups; idempotent (a watermark)."""
    return rollup_catch_up()


@shared_task(ignore_result=True)
def expire_assembly_records() -> int:
    """Delete assembly records past their workspace's retention once the rollups hold them."""
    return records_expire()
