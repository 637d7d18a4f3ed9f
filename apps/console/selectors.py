"""Reads for the developer console: assembly records, only from workspaces the user can see."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db.models import QuerySet

from apps.assembly.models import AssemblyRecord
from apps.workspaces.models import Workspace


def assembly_records_recent(*, workspaces: Sequence[Workspace], limit: int = 100) -> QuerySet[AssemblyRecord]:
    """The newest records of these workspaces, without their (large) request and trace JSON."""
    return (
        AssemblyRecord.objects.filter(workspace__in=list(workspaces))
        .select_related("workspace", "layer")
        .defer("request", "trace")
        .order_by("-created_at", "-id")[:limit]
    )


def assembly_record_get(*, workspaces: Sequence[Workspace], trace_id: uuid.UUID) -> AssemblyRecord | None:
    """One record by trace id, or None when it is missing or outside these workspaces."""
    return (
        AssemblyRecord.objects.filter(workspace__in=list(workspaces), trace_id=trace_id)
        .select_related("workspace", "layer", "api_key")
        .first()
    )
