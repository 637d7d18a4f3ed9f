"""Assembly records: what each context assembly was asked, what it produced and why; and their
rollups, the records summed per workspace and time bucket for the dashboard."""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from apps.layers.models import Layer
from apps.workspaces.models import ApiKey, Workspace


class RecordOrigin(models.TextChoices):
    """Who asked for an assembly: an agent (the API, MCP, the proxy: what the dashboard counts) or a
    person on a page (preview, stream, compare, replay: recorded so the trace opens, counted apart)."""

    AGENT = "agent", "Agent"
    PAGE = "page", "Page"


class AssemblyRecord(models.Model):
    """One context assembly: request, result figures and the decision trace for every candidate."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="assemblies")
    trace_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    layer = models.ForeignKey(Layer, on_delete=models.SET_NULL, null=True, blank=True, related_name="assemblies")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    origin = models.CharField(max_length=8, choices=RecordOrigin.choices, default=RecordOrigin.AGENT)
    request = models.JSONField()
    model = models.CharField(max_length=100)
    encoding = models.CharField(max_length=32)
    tokens_used = models.PositiveIntegerField()
    token_budget = models.PositiveIntegerField()
    items_included = models.PositiveIntegerField()
    candidates_considered = models.PositiveIntegerField(default=0)
    overflow_count = models.PositiveIntegerField(default=0)
    truncated_count = models.PositiveIntegerField(default=0)
    elapsed_ms = models.FloatField()
    assembly_cache_hit = models.BooleanField(default=False, help_text="Served from the assembly cache.")
    embedding_cache_hit = models.BooleanField(
        null=True, blank=True, help_text="The query embedding came from its cache; NULL: none was computed."
    )
    # Milliseconds per stage (apps/assembly/timings.py STAGES; a cache hit has only "cache").
    timings = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    partial = models.BooleanField(default=False, help_text="The deadline passed; part of the context was missing.")
    zone = models.CharField(max_length=16, blank=True, default="", help_text="The token zone of the request.")
    # [[item kind, layer id, tokens], ...] for every chunk sent, sampled or not: the dashboard's
    # tokens by item kind and by layer kind (rollup/pipeline.py) read it, never the trace.
    chunk_tokens = models.JSONField(default=list, blank=True)
    sampled = models.BooleanField(default=True, help_text="Whether the per-candidate trace was kept.")
    trace = models.JSONField(default=list, blank=True)
    # The context as returned, kept with the trace (sampled records only): the trace page shows it.
    context = models.TextField(blank=True, default="")
    # Consumption scope: which packages went to which session, group, agent type and
    # iteration, written in the same insert; agents report the ones they used (apps/consumption).
    session = models.CharField(max_length=200, blank=True, default="")
    group_id = models.CharField(max_length=200, blank=True, default="")
    agent_type = models.CharField(max_length=100, blank=True, default="")
    iteration = models.PositiveIntegerField(null=True, blank=True)
    injected_packages = ArrayField(models.BigIntegerField(), default=list, blank=True)
    used_packages = ArrayField(models.BigIntegerField(), null=True, blank=True, help_text="NULL: not reported yet.")
    consumption_reported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            # Consumption stats read only the assemblies that injected packages.
            models.Index(
                fields=["workspace", "agent_type"], condition=~Q(injected_packages=[]), name="assembly_with_packages"
            ),
            # The dashboard's consumption rollup reads the assemblies reported after its time watermark.
            models.Index(
                fields=["consumption_reported_at"],
                condition=Q(consumption_reported_at__isnull=False),
                name="assembly_reported",
            ),
        ]

    def __str__(self) -> str:
        return str(self.trace_id)


class OutputTemplate(models.Model):
    """A workspace's own chunk template: a body with {variables}, and bodies per type."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="templates")
    name = models.CharField(max_length=100)
    body = models.TextField()
    by_type = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="uniq_template_name")]

    def __str__(self) -> str:
        return self.name


class Span(models.TextChoices):
    """Bucket sizes, one per dashboard range, so a range reads one row per chart step."""

    MINUTE = "m", "Minute"
    QUARTER = "q", "15 minutes"
    HOUR = "h", "Hour"
    SIX_HOURS = "s", "6 hours"


class AssemblyRollup(models.Model):
    """One workspace's assemblies in one bucket of a span, summed (`rollup/pipeline.py`; never edited).

    The dashboard reads these instead of the records, one row per chart step whatever the traffic:
    an hour in minutes, a day in 15-minute buckets, a week in hours, a month in 6-hour buckets.
    Minutes older than `MINUTES_KEPT_HOURS` are dropped. Breakdowns (tokens by kind, latency bins, zones, agent
    types, models) are `AssemblyRollupCount` rows. The rollup tables kept the names they had while
    apps/web held them (`web_*`): the move was a change of owner, not of data.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    span = models.CharField(max_length=1, choices=Span.choices)
    bucket = models.DateTimeField(help_text="Start of the minute or hour.")
    assemblies = models.PositiveIntegerField(default=0)
    assembly_cache_hits = models.PositiveIntegerField(default=0)
    embedding_lookups = models.PositiveIntegerField(default=0, help_text="Assemblies that needed a query embedding.")
    embedding_cache_hits = models.PositiveIntegerField(default=0)
    tokens_used = models.BigIntegerField(default=0)
    token_budget = models.BigIntegerField(default=0)
    overflowed = models.PositiveIntegerField(default=0, help_text="Assemblies that left candidates out.")
    truncated = models.PositiveIntegerField(default=0, help_text="Assemblies that cut a chunk.")
    elapsed_ms = models.FloatField(default=0.0)

    class Meta:
        db_table = "web_assemblyrollup"
        constraints = [models.UniqueConstraint(fields=["workspace", "span", "bucket"], name="uniq_assembly_rollup")]

    def __str__(self) -> str:
        return f"{self.workspace_id} {self.span} {self.bucket:%Y-%m-%d %H:%M}: {self.assemblies}"


class AssemblyRollupCount(models.Model):
    """A breakdown of one rollup bucket: `dimension` (item_kind, layer_kind: tokens; latency_bin,
    zone, agent_type, model: assemblies; consumption: used/injected packages of the assemblies
    reported in the bucket) and its `key`, with the summed `value`."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    span = models.CharField(max_length=1, choices=Span.choices)
    bucket = models.DateTimeField()
    dimension = models.CharField(max_length=16)
    key = models.CharField(max_length=100)
    value = models.BigIntegerField(default=0)

    class Meta:
        db_table = "web_assemblyrollupcount"
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "span", "bucket", "dimension", "key"], name="uniq_assembly_rollup_count"
            )
        ]

    def __str__(self) -> str:
        return f"{self.workspace_id} {self.span} {self.bucket:%Y-%m-%d %H:%M} {self.dimension}={self.key}: {self.value}"


class RollupWatermark(models.Model):
    """How far the rollup has read: every AssemblyRecord with id <= `last_id` is in the rollups."""

    name = models.CharField(max_length=32, primary_key=True)
    last_id = models.BigIntegerField(default=0)
    last_at = models.DateTimeField(null=True, blank=True, help_text="For time watermarks (consumption reports).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "web_rollupwatermark"

    def __str__(self) -> str:
        return f"{self.name} ≤ {self.last_id}"
