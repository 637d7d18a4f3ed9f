"""Reads of assembly records for the apps above assembly (consumption, the pages and the console's
list, filters and search): they never query `AssemblyRecord` themselves. Every read of one record or
a list first writes this process's queued records (`records_flush`), so the record of an answer just
given is there. Every read takes the workspace: nothing outside it is ever listed or found."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import CharField, Count, F, Func, IntegerField, Max, Min, Q, QuerySet, Subquery, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.db.models.lookups import In

from apps.assembly.errors import TEMPLATE_NOT_FOUND
from apps.assembly.models import AssemblyRecord, OutputTemplate, RecordOrigin
from apps.assembly.recorded import request_decisions
from apps.assembly.services.record_writer import records_flush
from apps.core.errors import NotFound
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class RecordConsumption:
    """An assembly's consumption scope as far as its report goes: what it injected, what was reported used."""

    record_id: int
    trace_id: uuid.UUID
    injected: list[int]
    used: list[int] | None  # None: not reported yet
    reported_at: datetime | None


def record_consumption_get(*, workspace_id: int, trace_id: uuid.UUID) -> RecordConsumption | None:
    """The workspace's record of `trace_id` (None: no such record in this workspace; one query)."""
    records_flush()
    row = (
        AssemblyRecord.objects.filter(workspace_id=workspace_id, trace_id=trace_id)
        .values_list("pk", "trace_id", "injected_packages", "used_packages", "consumption_reported_at")
        .first()
    )
    if row is None:
        return None
    record_id, trace, injected, used, reported_at = row
    return RecordConsumption(record_id, trace, list(injected), None if used is None else list(used), reported_at)


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
    origin: str = ""  # RecordOrigin: an agent's request or a page run
    trace_ids: tuple[str, ...] | None = None  # only these (the pages' tag filter); () matches none

    def q(self) -> Q:
        """The filters as one condition on AssemblyRecord."""
        q = Q()
        if self.layer_id is not None:
            q &= Q(layer_id=self.layer_id)
        if self.api_key_id is not None:
            q &= Q(api_key_id=self.api_key_id)
        if self.agent_type:
            q &= Q(agent_type=self.agent_type)
        if self.origin:
            q &= Q(origin=self.origin)
        if self.trace_ids is not None:
            q &= Q(trace_id__in=self.trace_ids)
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
    decided = Q(request__resolved__zone=zone) | Q(request__zone=zone)  # the one shape, or an older record's
    originals = AssemblyRecord.objects.filter(decided).values(trace_text=Cast("trace_id", output_field=CharField()))
    return decided | Q(In(KeyTextTransform("cached_from", "request"), Subquery(originals)))


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
    return {str(trace_id): str(request_decisions(request).get("zone") or "") for trace_id, request in rows}


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
    records_flush()
    return (
        AssemblyRecord.objects.filter(Q(workspace=workspace) & filters.q())
        .select_related("layer", "api_key")
        .defer("trace", "context")
        .order_by("-created_at", "-id")
    )


def assembly_record_get(*, workspace_id: int, trace_id: uuid.UUID | str) -> AssemblyRecord | None:
    """One record by trace id, or None when it is missing or belongs to another workspace."""
    records_flush()
    return (
        AssemblyRecord.objects.filter(workspace_id=workspace_id, trace_id=trace_id)
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


def records_count(*, since: datetime, workspace_id: int | None = None, layer_id: int | None = None) -> int:
    """How many assemblies of the workspace or the layer were recorded since `since` (one count)."""
    records = AssemblyRecord.objects.filter(created_at__gte=since)
    if workspace_id is not None:
        records = records.filter(workspace_id=workspace_id)
    if layer_id is not None:
        records = records.filter(layer_id=layer_id)
    return records.count()


def records_first_at(*, workspace_id: int, since: datetime) -> datetime | None:
    """When the workspace's oldest assembly since `since` was recorded, or None (one aggregate)."""
    records_flush()
    found: datetime | None = AssemblyRecord.objects.filter(workspace_id=workspace_id, created_at__gte=since).aggregate(
        first=Min("created_at")
    )["first"]
    return found


def _session_q(*, workspace_id: int, layer_ids: Iterable[int], session: str | None, page_runs: bool = False) -> Q:
    """The assemblies of a session or conversation: made on one of `layer_ids` (it and the layers below
    it), or naming it (`session`, its external id) as their session; the agents' only, unless
    `page_runs` (previews, compares and replays are not the session's trajectory)."""
    q = Q(layer_id__in=list(layer_ids))
    if session:
        q |= Q(session=session)
    q = Q(workspace_id=workspace_id) & q
    return q if page_runs else q & Q(origin=RecordOrigin.AGENT)


def session_records(
    *,
    workspace_id: int,
    layer_ids: Iterable[int],
    session: str | None,
    limit: int,
    offset: int = 0,
    page_runs: bool = False,
) -> list[dict[str, Any]]:
    """The session's records newest first, `limit` of them after skipping the `offset` newest: trace id,
    time, request, tokens, budget, time taken, whether sampled or partial, and the trace (one query)."""
    rows = (
        AssemblyRecord.objects.filter(
            _session_q(workspace_id=workspace_id, layer_ids=layer_ids, session=session, page_runs=page_runs)
        )
        .order_by("-created_at", "-id")
        .values(
            "trace_id",
            "created_at",
            "request",
            "tokens_used",
            "token_budget",
            "elapsed_ms",
            "sampled",
            "partial",
            "trace",
        )[offset : offset + limit]
    )
    return [dict(row) for row in rows]


def session_record_figures(
    *, workspace_id: int, layer_ids: Iterable[int], session: str | None, limit: int, page_runs: bool = False
) -> list[tuple[int, int]]:
    """(tokens used, budget) of the session's newest `limit` records, newest first, without their
    traces: the overview of a long trajectory (one query)."""
    rows = (
        AssemblyRecord.objects.filter(
            _session_q(workspace_id=workspace_id, layer_ids=layer_ids, session=session, page_runs=page_runs)
        )
        .order_by("-created_at", "-id")
        .values_list("tokens_used", "token_budget")[:limit]
    )
    return [(int(used), int(budget)) for used, budget in rows]


def session_record_groups(
    *, workspace_id: int, layer_ids: Iterable[int], sessions: Iterable[str]
) -> list[dict[str, Any]]:
    """The workspace's records made on these layers or naming these sessions, counted per (layer id,
    session) with the newest's time: `layer_id`, `session`, `n`, `last` (one grouped query)."""
    return list(
        AssemblyRecord.objects.filter(workspace_id=workspace_id, origin=RecordOrigin.AGENT)
        .filter(Q(layer_id__in=list(layer_ids)) | Q(session__in=list(sessions)))
        .values("layer_id", "session")
        .annotate(n=Count("id"), last=Max("created_at"))
    )


def records_requests(*, workspace_id: int, trace_ids: Iterable[str]) -> dict[str, tuple[Any, Any]]:
    """(request, trace) of each of these records of the workspace, by trace id (one query): the originals
    of cache hits, whose decisions the hits repeat."""
    rows = AssemblyRecord.objects.filter(workspace_id=workspace_id, trace_id__in=list(trace_ids)).values_list(
        "trace_id", "request", "trace"
    )
    return {str(trace_id): (request, trace) for trace_id, request, trace in rows}


def template_names(*, workspace: Workspace) -> list[str]:
    """The names of the workspace's own output templates, by name."""
    return list(OutputTemplate.objects.filter(workspace=workspace).order_by("name").values_list("name", flat=True))


def templates_list(*, workspace: Workspace) -> QuerySet[OutputTemplate]:
    """The workspace's own output templates, by name."""
    return OutputTemplate.objects.filter(workspace=workspace).order_by("name")


def template_get(*, workspace: Workspace, name: str) -> OutputTemplate:
    """One of the workspace's templates by name; another workspace's or none is a 404 `template_not_found`."""
    template = OutputTemplate.objects.filter(workspace=workspace, name=name).first()
    if template is None:
        raise NotFound(f"template {name!r} not found", code=TEMPLATE_NOT_FOUND)
    return template


def _cardinality(field: str) -> Func:
    return Func(F(field), function="cardinality", output_field=IntegerField())


def consumption_by_agent_type(*, workspace_id: int, agent_type: str | None = None) -> list[dict[str, Any]]:
    """Per agent type (only `agent_type`'s when given), the workspace's assemblies that injected
    packages, not counting cache hits (a hit repeats its original's injection and reports against it):
    `assemblies`, `reported`, and the packages `injected` and `used` by the reported ones and `unreported`
    by the others (one grouped query)."""
    records_flush()
    records = AssemblyRecord.objects.filter(workspace_id=workspace_id).exclude(injected_packages=[])
    records = records.exclude(request__has_key="cached_from")
    if agent_type is not None:
        records = records.filter(agent_type=agent_type)
    reported = Q(used_packages__isnull=False)
    rows = (
        records.values("agent_type")
        .annotate(
            assemblies=Count("id"),
            reported=Count("id", filter=reported),
            injected=Sum(_cardinality("injected_packages"), filter=reported, default=0),
            used=Sum(_cardinality("used_packages"), filter=reported, default=0),
            unreported=Sum(_cardinality("injected_packages"), filter=~reported, default=0),
        )
        .order_by("agent_type")
    )
    return [dict(row) for row in rows]
