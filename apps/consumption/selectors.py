"""Reads: strategies, and the consumption figures for the stats endpoint."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from apps.assembly.selectors import consumption_by_agent_type
from apps.consumption.errors import STRATEGY_NOT_FOUND
from apps.core.errors import NotFound
from apps.layers.models import Item, ItemKind
from apps.layers.selectors import items_list
from apps.workspaces.models import Workspace


def strategies_list(*, workspace: Workspace, group_id: str = "", agent_type: str = "") -> QuerySet[Item]:
    """The workspace's strategies (packages of type strategy), most helpful first."""
    strategies = items_list(workspace=workspace, kind=ItemKind.PACKAGE, type="strategy")
    if group_id:
        strategies = strategies.filter(group_id=group_id)
    if agent_type:
        strategies = strategies.filter(Q(agent_types__contains=[agent_type]) | Q(agent_types=[]))
    return strategies.order_by("-helpfulness", "-created_at", "-id")


def strategy_get(*, workspace: Workspace, strategy_id: int) -> Item:
    """A strategy of the workspace; anything else (another kind, another workspace) is a 404."""
    strategy = items_list(workspace=workspace, kind=ItemKind.PACKAGE, type="strategy").filter(pk=strategy_id).first()
    if strategy is None:
        raise NotFound(f"strategy {strategy_id} not found", code=STRATEGY_NOT_FOUND)
    return strategy


def _figures(assemblies: int, reported: int, injected: int, used: int, unreported: int) -> dict[str, Any]:
    ratio = round(used / injected, 4) if injected else None
    return {
        "assemblies": assemblies,
        "reported": reported,
        "injected": injected,
        "used": used,
        "ratio": ratio,
        "meets_target": None if ratio is None else ratio > settings.CONSUMPTION_TARGET_RATIO,
        "injected_unreported": unreported,
    }


def consumption_stats(*, workspace_id: int, agent_type: str | None = None) -> dict[str, Any]:
    """Consumed / injected packages for the workspace and per agent type (one grouped query).

    Counts assemblies that injected packages; a cache hit repeats its original's injection (same
    scope, same trace_id to report against) and is not counted again. The ratio is over reported
    assemblies only: an assembly whose agent has not reported yet is unknown, not unused, and its
    packages are shown apart as `injected_unreported`.
    """
    rows = consumption_by_agent_type(workspace_id=workspace_id, agent_type=agent_type)
    keys = ("assemblies", "reported", "injected", "used", "unreported")
    totals = dict.fromkeys(keys, 0)
    by_agent_type = []
    for row in rows:
        for key in keys:
            totals[key] += row[key]
        by_agent_type.append({"agent_type": row["agent_type"], **_figures(*(row[key] for key in keys))})
    return {
        "target_ratio": settings.CONSUMPTION_TARGET_RATIO,
        **_figures(*(totals[key] for key in keys)),
        "by_agent_type": by_agent_type,
    }
