"""What the pages remember about a person between sessions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.workspaces.models import Workspace


class WorkspacePreference(models.Model):
    """The workspace a user last switched to, so a new session opens there (not on the first by name)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="workspace_preference"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} → {self.workspace}"


class Span(models.TextChoices):
    """Bucket sizes, one per dashboard range, so a range reads one row per chart step."""

    MINUTE = "m", "Minute"
    QUARTER = "q", "15 minutes"
    HOUR = "h", "Hour"
    SIX_HOURS = "s", "6 hours"


class AssemblyRollup(models.Model):
    """One workspace's assemblies in one minute or one hour, summed (apps/web/rollup.py; never edited).

    The dashboard reads these instead of the records, one row per chart step whatever the traffic:
    an hour in minutes, a day in 15-minute buckets, a week in hours, a month in 6-hour buckets.
    Minutes older than `MINUTES_KEPT_HOURS` are dropped. Breakdowns (tokens by kind, latency bins, zones, agent
    types, models) are `AssemblyRollupCount` rows.
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

    def __str__(self) -> str:
        return f"{self.name} ≤ {self.last_id}"
