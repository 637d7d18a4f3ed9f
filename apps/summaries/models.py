"""Pre-computed layer summaries at three depths, and each layer's summary configuration."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from apps.layers.models import Layer, LayerKind
from apps.workspaces.models import Workspace


class Personalization(models.TextChoices):
    GENERIC = "generic", "Generic"
    PERSONALIZED = "personalized", "Personalized"
    HIGHLY_PERSONALIZED = "highly_personalized", "Highly personalized"


# Defaults per kind: (update interval seconds, update-on-changes threshold, personalization).
LAYER_CONFIG_DEFAULTS: dict[str, tuple[int, int, str]] = {
    LayerKind.COMPANY: (3600, 10, Personalization.GENERIC),
    LayerKind.ORG: (3600, 10, Personalization.GENERIC),
    LayerKind.TEAM: (3600, 5, Personalization.PERSONALIZED),
    LayerKind.PROJECT: (1800, 3, Personalization.PERSONALIZED),
    LayerKind.MULTI_SESSION: (900, 2, Personalization.PERSONALIZED),
    LayerKind.SESSION: (300, 1, Personalization.HIGHLY_PERSONALIZED),
}


class LayerConfig(models.Model):
    """How a layer's summaries are kept fresh; validated on every save.

    Created with its layer (the answer to `layers.signals.layer_created`). Its table kept the name it
    had while layers held the model (`layers_layerconfig`): the move was a change of owner, not of data.
    """

    layer = models.OneToOneField(Layer, on_delete=models.CASCADE, related_name="config")
    update_interval_seconds = models.PositiveIntegerField()
    update_on_changes = models.PositiveIntegerField()
    personalization = models.CharField(max_length=24, choices=Personalization.choices)
    skip_if_unchanged = models.BooleanField(default=True)
    changes_since_summary = models.PositiveIntegerField(default=0)
    last_summarized_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "layers_layerconfig"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if not 60 <= self.update_interval_seconds <= 7 * 24 * 3600:
            errors["update_interval_seconds"] = "must be between 60 seconds and 7 days"
        if not 1 <= self.update_on_changes <= 10_000:
            errors["update_on_changes"] = "must be between 1 and 10000"
        if self.personalization not in Personalization.values:
            errors["personalization"] = f"must be one of {', '.join(Personalization.values)}"
        if errors:
            raise ValidationError(errors)

    def save(self, *args: object, **kwargs: object) -> None:
        self.full_clean(exclude=["layer"])
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"config of {self.layer}"


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
    # The text's passage vector (apps/summaries/vectors.py), compared with the query in process
    # (apps/core/stored_vectors.py) so that assembly ranks the summary by relevance like an item;
    # None until the background embeds it, and again once the text changes.
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, default="")

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
    """One workspace's LLM summarization spend on one UTC day.

    Past the daily token or USD budget the extractive provider takes over until the next day.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    usd = models.FloatField(default=0.0)
    # Held by calls in flight (their worst case) until each settles to its real usage (budget.py).
    reserved_tokens = models.BigIntegerField(default=0)
    reserved_usd = models.FloatField(default=0.0)

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


class SummaryJob(models.Model):
    """A layer's summarize run left to the background while the LLM fails (apps/summaries/jobs.py).

    One row per layer: the latest job's state, so `POST .../summarize/` answers at once and the
    caller reads how the retries went in the layer's summaries (`job`).
    """

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    layer = models.OneToOneField(Layer, on_delete=models.CASCADE, primary_key=True, related_name="+")
    state = models.CharField(max_length=16, choices=State.choices)
    runs = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    requested_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.layer_id}: {self.state}"
