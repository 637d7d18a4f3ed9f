"""The workspace at a glance: counts that head the dashboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Q
from django.db.models.functions import TruncHour
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Item, Layer
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Overview:
    layers: int
    items: int
    items_pending_embedding: int
    assemblies_24h: int
    hourly: list[tuple[datetime, int]]


def workspace_overview(*, workspace: Workspace) -> Overview:
    """Layer and item counts, the embedding backlog and the last day's assemblies per hour (3 queries)."""
    items = Item.objects.filter(workspace=workspace).aggregate(
        total=Count("pk"), pending=Count("pk", filter=Q(embedding__isnull=True))
    )
    now = timezone.now()
    since = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    counts = dict(
        AssemblyRecord.objects.filter(workspace=workspace, created_at__gte=since)
        .annotate(hour=TruncHour("created_at"))
        .values_list("hour")
        .annotate(n=Count("pk"))
        .values_list("hour", "n")
    )
    hourly = [(since + timedelta(hours=h), counts.get(since + timedelta(hours=h), 0)) for h in range(24)]
    return Overview(
        layers=Layer.objects.filter(workspace=workspace).count(),
        items=items["total"],
        items_pending_embedding=items["pending"],
        assemblies_24h=sum(n for _, n in hourly),
        hourly=hourly,
    )
