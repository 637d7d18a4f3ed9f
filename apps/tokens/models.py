"""Observations of token counts: ours beside what an upstream model reported for the same prompt."""

from __future__ import annotations

from django.db import models

from apps.workspaces.models import Workspace


class TokenObservation(models.Model):
    """One call: the tokens we counted for a prompt (`counted`, and `base_tokens` in the catalogue
    encoding before an estimate's ratio) and the prompt tokens the upstream reported.

    Per workspace: an estimate is calibrated only from its own workspace's calls, so one tenant's
    upstream cannot move another tenant's budgets.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    family = models.CharField(max_length=40, blank=True)  # the estimate family; "" for an exact model
    encoding = models.CharField(max_length=40)
    counted = models.PositiveIntegerField()
    base_tokens = models.PositiveIntegerField()
    reported = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "family", "-id"], name="tokenobs_family"),
            models.Index(fields=["workspace", "model", "-id"], name="tokenobs_model"),
        ]

    def __str__(self) -> str:
        return f"{self.model}: {self.counted} counted, {self.reported} reported"
