"""Pre-computed layer summaries at three depths (seed 000)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.layers.models import Layer
from apps.workspaces.models import Workspace


class Depth(models.TextChoices):
    SENTENCE = "sentence", "Sentence (≤ 50 tokens)"
    PARAGRAPH = "paragraph", "Paragraph (≤ 200 tokens)"
    DETAILED = "detailed", "Detailed (≤ 500 tokens)"


DEPTH_TOKEN_LIMITS: dict[str, int] = {Depth.SENTENCE: 50, Depth.PARAGRAPH: 200, Depth.DETAILED: 500}


class Summary(models.Model):
    """A layer's summary at one depth, generic or personalized for one user."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="summaries")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="summaries")
    depth = models.CharField(max_length=16, choices=Depth.choices)
    text = models.TextField()
    token_count = models.PositiveIntegerField()
    source_hash = models.CharField(max_length=64)
    generated_at = models.DateTimeField()
    provider = models.CharField(max_length=64)
    stale = models.BooleanField(default=False)
    personalized_for = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # What a personalized summary drew on: {"user": ..., "items": [ids], "concerns": "..."}; {} when generic.
    personalization_ref = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["layer", "depth"], condition=Q(personalized_for__isnull=True), name="uniq_generic_summary"
            ),
            models.UniqueConstraint(
                fields=["layer", "depth", "personalized_for"],
                condition=Q(personalized_for__isnull=False),
                name="uniq_personal_summary",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.layer} {self.depth}"


class SummaryUsage(models.Model):
    """One workspace's LLM summarization spend on one UTC day (seed 002 cost control).

    Past the daily token or USD budget the extractive provider takes over until the next day.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    usd = models.FloatField(default=0.0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "day"], name="uniq_summary_usage_day")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.day}: {self.prompt_tokens + self.completion_tokens} tokens"


class ProviderHealth(models.Model):
    """Consecutive LLM summarization failures of a workspace, so repeated failures raise one alert."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="+")
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    last_failure_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.workspace}: {self.consecutive_failures} failures in a row"


class SummaryRunCount(models.Model):
    """What one workspace's summary runs did in one UTC minute, by outcome (apps/summaries/run_counts.py).

    Written by every run (`layer_summarize`), one additive upsert, so the figures over time survive
    the summaries they describe; the dashboard (apps/web) reads them. A minute per row keeps a
    month at most 43,200 rows per workspace, however many layers run.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    minute = models.DateTimeField(help_text="Start of the UTC minute.")
    generated = models.PositiveIntegerField(default=0, help_text="Runs that wrote new summaries.")
    skipped = models.PositiveIntegerField(default=0, help_text="Runs skipped: the source hash was unchanged.")
    empty = models.PositiveIntegerField(default=0, help_text="Runs skipped: the layer had no content.")
    failed = models.PositiveIntegerField(default=0, help_text="Runs whose LLM failed (or that raised).")
    marked_stale = models.PositiveIntegerField(default=0, help_text="Summaries a failed run left marked stale.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "minute"], name="uniq_summary_run_minute")]

    def __str__(self) -> str:
        return f"{self.workspace_id} {self.minute:%Y-%m-%d %H:%M}: {self.generated} generated, {self.failed} failed"
