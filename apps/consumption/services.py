"""Writes: agents' consumption reports and their feedback on strategies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.assembly.errors import TRACE_NOT_FOUND
from apps.assembly.selectors import record_consumption_get
from apps.assembly.services.consumption import record_consumption_claim
from apps.consumption.errors import CONSUMPTION_ALREADY_REPORTED, USED_NOT_INJECTED
from apps.consumption.selectors import strategy_get
from apps.core.errors import Conflict, DomainError, InvalidInput, NotFound
from apps.layers.models import Item, ItemKind, Layer
from apps.layers.services import (
    ItemInput,
    item_delete,
    item_errors,
    item_helpfulness_add,
    item_update,
    items_create,
)
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
    """Record which of an assembly's injected packages the agent actually used.

    One report per assembly. Repeating the same report is idempotent (`duplicate`); a different
    one is a Conflict, so a retried request never double counts and a late change of mind never
    silently rewrites the figures. A cached answer carries its original assembly's trace_id, so
    its report lands on that assembly.
    """
    record = record_consumption_get(workspace_id=workspace.pk, trace_id=trace_id)
    if record is None:
        raise NotFound("trace not found", code=TRACE_NOT_FOUND)
    wanted = list(dict.fromkeys(used))  # order kept, repeats dropped
    injected = record.injected
    stray = [i for i in wanted if i not in set(injected)]
    if stray:
        raise InvalidInput(
            "used ids must be packages injected by this assembly",
            code=USED_NOT_INJECTED,
            details={"not_injected": stray, "injected": injected},
        )
    now = now or timezone.now()
    if record_consumption_claim(record_id=record.record_id, used=wanted, at=now):
        return ConsumptionReport(record.trace_id, injected, wanted, now, duplicate=False)
    record = record_consumption_get(workspace_id=workspace.pk, trace_id=trace_id) or record
    earlier = list(record.used or [])
    if set(earlier) != set(wanted):
        raise Conflict(
            "consumption was already reported for this trace with other ids",
            code=CONSUMPTION_ALREADY_REPORTED,
            details={"used": earlier},
        )
    reported_at = record.reported_at or now
    return ConsumptionReport(record.trace_id, injected, earlier, reported_at, duplicate=True)


def _strategy_input(fields: dict[str, Any], helpfulness: float) -> ItemInput:
    return ItemInput(kind=ItemKind.PACKAGE, type="strategy", helpfulness=helpfulness, **fields)


def strategy_errors(*, fields: dict[str, Any], helpfulness: float = 0.5) -> dict[str, DomainError]:
    """Every reason these fields are not a strategy, by field ({} when fine): the items' one validator."""
    return item_errors(_strategy_input(fields, helpfulness))


def strategy_create(*, layer: Layer, fields: dict[str, Any], helpfulness: float = 0.5) -> Item:
    """Store a successful approach as a package item of type `strategy` (validated like any item)."""
    (strategy,) = items_create(layer=layer, items=[_strategy_input(fields, helpfulness)])
    return strategy


def strategy_update(*, strategy: Item, changes: dict[str, Any]) -> Item:
    """Change a strategy's text and scope (its kind and type stay); `item_update_errors` says why not."""
    return item_update(item=strategy, changes=changes)


def strategy_delete(*, strategy: Item) -> None:
    item_delete(item=strategy)


def strategy_feedback(*, workspace: Workspace, strategy_id: int, helpful: bool) -> Item:
    """Raise or lower a strategy's helpfulness by STRATEGY_FEEDBACK_STEP, bounded to [0, 1].

    One UPDATE with an F expression, so concurrent feedback never loses a step; the workspace's
    cached contexts are invalidated because the ranking changed.
    """
    strategy = strategy_get(workspace=workspace, strategy_id=strategy_id)
    step = settings.STRATEGY_FEEDBACK_STEP if helpful else -settings.STRATEGY_FEEDBACK_STEP
    strategy.helpfulness = item_helpfulness_add(item=strategy, step=step)
    return strategy
