"""The sessions and conversations of a workspace, with their message and assembly counts (3 queries)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Count, Max, Q

from apps.assembly.models import AssemblyRecord
from apps.layers.models import ItemKind, Layer, LayerKind
from apps.workspaces.models import Workspace

CONVERSATION_KINDS = (LayerKind.MULTI_SESSION, LayerKind.SESSION)
NEVER = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SessionRow:
    id: int
    kind: str
    name: str
    external_id: str | None
    messages: int
    assemblies: int
    last_assembly_at: datetime | None


def sessions_list(*, workspace: Workspace, limit: int = 200) -> list[SessionRow]:
    """Conversations (multi-session) and sessions, most recently assembled first."""
    layers = list(
        Layer.objects.filter(workspace=workspace, kind__in=CONVERSATION_KINDS)
        .annotate(messages=Count("items", filter=Q(items__kind=ItemKind.MESSAGE)))
        .order_by("-id")[:limit]
    )
    figures = {
        row["layer_id"]: row
        for row in AssemblyRecord.objects.filter(workspace=workspace, layer_id__in=[layer.pk for layer in layers])
        .values("layer_id")
        .annotate(n=Count("id"), last=Max("created_at"))
    }
    rows = [
        SessionRow(
            id=layer.pk,
            kind=layer.get_kind_display(),
            name=layer.name,
            external_id=layer.external_id,
            messages=layer.messages,  # annotated above
            assemblies=figures.get(layer.pk, {}).get("n", 0),
            last_assembly_at=figures.get(layer.pk, {}).get("last"),
        )
        for layer in layers
    ]
    rows.sort(key=lambda row: (row.last_assembly_at or NEVER, row.id), reverse=True)
    return rows
