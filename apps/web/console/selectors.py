"""Reads for the developer console: a workspace's assembly records, filtered and searched.

Every read takes the workspace: nothing outside it is ever listed or found.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import CharField, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.db.models.lookups import In

from apps.assembly.models import AssemblyRecord
from apps.assembly.services import records_flush
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class RecordFilters:
    """What the console's list may be narrowed by; None or "" means "any"."""

    layer_id: int | None = None
    api_key_id: int | None = None
    agent_type: str = ""
    cached: bool | None = None  # served from the assembly cache
    partial: bool | None = None  # the deadline passed, part of the context is missing
    zone: str = ""
    since: datetime | None = None
    until: datetime | None = None
    search: str = ""  # a trace id (whole) or words of the query

    def q(self) -> Q:
        """The filters as one condition on AssemblyRecord."""
        q = Q()
        if self.layer_id is not None:
            q &= Q(layer_id=self.layer_id)
        if self.api_key_id is not None:
            q &= Q(api_key_id=self.api_key_id)
        if self.agent_type:
            q &= Q(agent_type=self.agent_type)
        if self.cached is not None:
            q &= Q(assembly_cache_hit=self.cached)
        if self.partial is not None:
            q &= Q(partial=self.partial)
        if self.zone:
            q &= _zone_q(self.zone)
        if self.since is not None:
            q &= Q(created_at__gte=self.since)
        if self.until is not None:
            q &= Q(created_at__lt=self.until)
        if self.search:
            q &= _search_q(self.search)
        return q


def _zone_q(zone: str) -> Q:
    """Records assembled in `zone`, and cache hits of such records (a hit's request keeps only
    its query and `cached_from`; the zone is its original's)."""
    originals = AssemblyRecord.objects.filter(request__zone=zone).values(
        trace_text=Cast("trace_id", output_field=CharField())
    )
    return Q(request__zone=zone) | Q(In(KeyTextTransform("cached_from", "request"), Subquery(originals)))


def original_zones(*, workspace: Workspace, records: list[AssemblyRecord]) -> dict[str, str]:
    """The zone of each cache hit's original among `records`, by the hit's `cached_from` (one query)."""
    wanted = {
        str(record.request["cached_from"])
        for record in records
        if isinstance(record.request, dict) and record.request.get("cached_from")
    }
    if not wanted:
        return {}
    rows = AssemblyRecord.objects.filter(workspace=workspace, trace_id__in=wanted).values_list("trace_id", "request")
    return {str(trace_id): str(request.get("zone") or "") for trace_id, request in rows if isinstance(request, dict)}


HEX_PREFIX = re.compile(r"[0-9a-f]{4,32}")


def _search_q(text: str) -> Q:
    """A trace id, whole or its first characters as the list shows them, or words of the (redacted) query.

    A prefix is a range of the trace-id index (UUIDs order as their hex digits), never a text scan;
    hex-looking words ("cafe") also search the query text.
    """
    text = text.strip()
    try:
        return Q(trace_id=uuid.UUID(text))
    except ValueError:
        pass
    words = Q(request__query__icontains=text)
    digits = text.lower().replace("-", "")
    if not HEX_PREFIX.fullmatch(digits):
        return words
    low, high = uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))
    return Q(trace_id__gte=low, trace_id__lte=high) | words


def assembly_records_list(*, workspace: Workspace, filters: RecordFilters) -> QuerySet[AssemblyRecord]:
    """The workspace's records matching `filters`, newest first, without their (large) trace JSON."""
    records_flush()  # answers just given may still have their records queued in this process
    return (
        AssemblyRecord.objects.filter(Q(workspace=workspace) & filters.q())
        .select_related("layer", "api_key")
        .defer("trace")
        .order_by("-created_at", "-id")
    )


def assembly_record_get(*, workspace: Workspace, trace_id: uuid.UUID) -> AssemblyRecord | None:
    """One record by trace id, or None when it is missing or belongs to another workspace."""
    records_flush()  # answers just given may still have their records queued in this process
    return (
        AssemblyRecord.objects.filter(workspace=workspace, trace_id=trace_id)
        .select_related("workspace", "layer", "api_key")
        .first()
    )


def agent_types_recorded(*, workspace: Workspace, limit: int = 50) -> list[str]:
    """The agent types seen in the workspace's records (for the filter's choices)."""
    rows = (
        AssemblyRecord.objects.filter(workspace=workspace)
        .exclude(agent_type="")
        .values_list("agent_type", flat=True)
        .distinct()
        .order_by("agent_type")[:limit]
    )
    return list(rows)
