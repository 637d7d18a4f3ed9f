"""Lessons from past errors: agents' attempts, the signatures and solutions captured from them.

Every text field here is stored redacted (apps/redaction): the original error or solution never
reaches the database.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.layers.models import Layer
from apps.workspaces.models import Workspace


class ErrorPattern(models.Model):
    """An error signature seen in a workspace and the solution that followed it.

    `confidence` is the estimated chance that the solution works: the mean of a Beta prior updated
    by `occurrences` (fail → succeed with this signature) and `failures` (a failure after the hint
    was injected). It is kept in the row so filters and hints read it directly; the services update
    it in the same statement as the counters, so concurrent reports lose nothing.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="error_patterns")
    signature = models.CharField(max_length=1000)
    error_excerpt = models.TextField()
    solution = models.TextField()
    confidence = models.FloatField(default=0.5)
    occurrences = models.PositiveIntegerField(default=1)
    failures = models.PositiveIntegerField(default=0, help_text="Failures that followed an injected hint.")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "signature"], name="uniq_error_signature")]
        indexes = [
            models.Index(fields=["workspace", "-confidence"], name="errpat_ws_confidence"),
            models.Index(fields=["last_seen"], name="errpat_last_seen"),
        ]

    def __str__(self) -> str:
        return self.signature[:80]


class Outcome(models.TextChoices):
    FAILED = "failed", "Failed"
    SUCCEEDED = "succeeded", "Succeeded"


class Attempt(models.Model):
    """One agent's attempt at a task group within a session, as the agent reported it.

    A failed attempt stays `resolved=False` until a later success of the same session, agent type
    and group claims it (one UPDATE, so two concurrent successes cannot both capture it).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="attempts")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="attempts")
    agent_type = models.CharField(max_length=100, blank=True, default="")
    group_id = models.CharField(max_length=200, blank=True, default="")
    iteration = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    error = models.TextField(blank=True, default="")
    signature = models.CharField(max_length=1000, blank=True, default="")
    solution = models.TextField(blank=True, default="")
    resolved = models.BooleanField(default=False)
    pattern = models.ForeignKey(ErrorPattern, on_delete=models.SET_NULL, null=True, blank=True, related_name="attempts")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "layer", "agent_type", "group_id", "-created_at"], name="attempt_scope"),
            models.Index(fields=["workspace", "agent_type"], name="attempt_ws_agent"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_type or 'agent'} {self.outcome} in {self.group_id or 'no group'}"


class HintInjection(models.Model):
    """A known fix that went into an assembled context, so a later failure can count against it.

    `resolved_at` is set by the first attempt reported after it in the same session, agent type and
    group: a failure lowers the pattern's confidence once per injection. `failed` records which it
    was (NULL while open), so "failures after a hint" can be counted over time (by `resolved_at`).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    pattern = models.ForeignKey(ErrorPattern, on_delete=models.CASCADE, related_name="injections")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="+")
    agent_type = models.CharField(max_length=100, blank=True, default="")
    group_id = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)
    failed = models.BooleanField(
        null=True, blank=True, help_text="The attempt that resolved it failed (NULL: no attempt yet)."
    )

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "layer"], condition=models.Q(resolved_at__isnull=True), name="hint_open"),
            # The dashboard's rollup reads injections and the failures after them by time, every
            # minute for all workspaces (apps/assembly/rollup); its tail, after the rollup's watermark.
            models.Index(fields=["created_at"], name="hint_created"),
            models.Index(fields=["resolved_at"], condition=models.Q(failed=True), name="hint_failed_at"),
        ]

    def __str__(self) -> str:
        return f"hint {self.pattern_id} in layer {self.layer_id}"
