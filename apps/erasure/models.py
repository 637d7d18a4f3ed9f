"""Erasure receipts: what an erasure named (as keyed hashes), what it found where and what became of it."""

from __future__ import annotations

from django.db import models

from apps.workspaces.models import ApiKey, Workspace


class ErasureState(models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ErasureRecord(models.Model):
    """One erasure or dry run and its receipt. Holds no erased text: the prefix, user and text it named
    are kept as HMACs (`named`), so a later request can be matched to its dry run (`fingerprint`)
    without anyone reading them back; item ids are numbers and kept as given."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    dry_run = models.BooleanField(default=False)
    dry_run_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The dry run it confirmed.",
    )
    state = models.CharField(max_length=8, choices=ErasureState.choices, default=ErasureState.RUNNING)
    named = models.JSONField(default=dict, help_text="item_ids as given; the prefix, user and text as HMACs.")
    fingerprint = models.CharField(max_length=64, help_text="HMAC of everything named: a dry run's match.")
    places = models.JSONField(default=dict, help_text="Per place: found, removed, rewritten, regenerated, cleared.")
    failed_at = models.CharField(max_length=100, blank=True, default="", help_text="The hook that failed.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="erasure_recent")]

    def __str__(self) -> str:
        return f"erasure {self.pk} of {self.workspace_id} ({'dry run' if self.dry_run else self.state})"
