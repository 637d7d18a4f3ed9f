"""Writes: agents' consumption reports and their feedback on strategies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, FloatField, Value
from django.db.models.functions import Greatest, Least
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.assembly.services import records_flush
from apps.consumption.selectors import strategy_get
from apps.core.errors import Conflict, InvalidInput, NotFound
from apps.core.versions import content_changed
from apps.layers.models import Item, ItemKind, Layer
from apps.layers.services import ItemInput, items_create
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class ConsumptionReport:
    """What an assembly injected and what its agent reported as used."""

    trace_id: uuid.UUID
    injected: list[int]
    used: list[int]
    reported_at: datetime
    duplicate: bool  # True: the same report was already recorded (nothing changed)

    @property
    def ratio(self) -> float | None:
        return round(len(self.used) / len(self.injected), 4) if self.injected else None


def consumption_report(
    *, workspace: Workspace, trace_id: uuid.UUID, used: list[int], now: datetime | None = None
) -> ConsumptionReport:
    """Record which of an assembly's injected packages the agent actually used (SC-003).

    One report per assembly. Repeating the same report is idempotent (`duplicate`); a different
    one is a Conflict, so a retried request never double counts and a late change of mind never
    silently rewrites the figures. A cached answer carries its original assembly's trace_id, so
    its report lands on that assembly.
    """
    records_flush()  # the record of an answer just given may still be queued in this process
    record = (
        AssemblyRecord.objects.filter(workspace=workspace, trace_id=trace_id)
        .only("pk", "trace_id", "injected_packages", "used_packages", "consumption_reported_at")
        .first()
    )
    if record is None:
        raise NotFound("trace not found", code="trace_not_found")
    wanted = list(dict.fromkeys(used))  # order kept, repeats dropped
    injected = list(record.injected_packages)
    stray = [i for i in wanted if i not in set(injected)]
    if stray:
        raise InvalidInput(
            "used ids must be packages injected by this assembly",
            code="used_not_injected",
            details={"not_injected": stray, "injected": injected},
        )
    now = now or timezone.now()
    claimed = AssemblyRecord.objects.filter(pk=record.pk, used_packages__isnull=True).update(
        used_packages=wanted, consumption_reported_at=now
    )
    if claimed:
        return ConsumptionReport(record.trace_id, injected, wanted, now, duplicate=False)
    record.refresh_from_db(fields=["used_packages", "consumption_reported_at"])
    earlier = list(record.used_packages or [])
    if set(earlier) != set(wanted):
        raise Conflict(
            "consumption was already reported for this trace with other ids",
            code="consumption_already_reported",
            details={"used": earlier},
        )
    reported_at = record.consumption_reported_at or now
    return ConsumptionReport(record.trace_id, injected, earlier, reported_at, duplicate=True)


def strategy_create(*, layer: Layer, fields: dict[str, Any], helpfulness: float = 0.5) -> Item:
    """Store a successful approach as a package item of type `strategy` (validated like any item)."""
    with transaction.atomic():
        (strategy,) = items_create(layer=layer, items=[ItemInput(kind=ItemKind.PACKAGE, type="strategy", **fields)])
        if helpfulness != strategy.helpfulness:
            Item.objects.filter(pk=strategy.pk).update(helpfulness=helpfulness)
            strategy.helpfulness = helpfulness
    return strategy


def strategy_feedback(*, workspace: Workspace, strategy_id: int, helpful: bool) -> Item:
    """Raise or lower a strategy's helpfulness by STRATEGY_FEEDBACK_STEP, bounded to [0, 1].

    One UPDATE with an F expression, so concurrent feedback never loses a step; the workspace's
    cached contexts are invalidated because the ranking changed.
    """
    strategy = strategy_get(workspace=workspace, strategy_id=strategy_id)
    step = settings.STRATEGY_FEEDBACK_STEP if helpful else -settings.STRATEGY_FEEDBACK_STEP
    bounded = Least(Greatest(F("helpfulness") + Value(step), Value(0.0)), Value(1.0), output_field=FloatField())
    Item.objects.filter(pk=strategy.pk).update(helpfulness=bounded)
    content_changed(workspace.pk)
    strategy.refresh_from_db(fields=["helpfulness"])
    return strategy
