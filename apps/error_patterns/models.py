"""Lessons from past errors: a normalized signature and the solution that worked (seed 001)."""

from __future__ import annotations

from django.db import models

from apps.workspaces.models import Workspace


class ErrorPattern(models.Model):
    """An error signature seen in a workspace and the solution that followed it.

    `error_excerpt` and `solution` are stored redacted; the original text never reaches the database.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="error_patterns")
    signature = models.CharField(max_length=1000)
    error_excerpt = models.TextField()
    solution = models.TextField()
    confidence = models.FloatField(default=0.5)
    occurrences = models.PositiveIntegerField(default=1)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "signature"], name="uniq_error_signature")]

    def __str__(self) -> str:
        return self.signature[:80]
