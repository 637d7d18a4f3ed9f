"""Celery tasks of the assembly app: they take ids and JSON and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from apps.assembly.params import params_from_json
from apps.assembly.services import context_warm


@shared_task(ignore_result=True, max_retries=0)
def warm_context(workspace_id: int, params: dict[str, Any]) -> None:
    """Finish a context that passed its deadline, so the next identical request gets it whole."""
    context_warm(workspace_id=workspace_id, params=params_from_json(params))
