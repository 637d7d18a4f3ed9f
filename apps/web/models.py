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


class TraceNote(models.Model):
    """Tags and a note people put on a trace (Langfuse-style annotations), one per trace of a workspace.

    Keyed by trace id, not by a foreign key to the record: the retention sweep deletes records in raw
    batches (apps/assembly/services/retention.py), and a note on a swept trace is simply never shown.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    trace_id = models.UUIDField()
    tags = models.JSONField(default=list, blank=True)  # sorted, unique, each TAG_PATTERN
    note = models.TextField(blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "trace_id"], name="uniq_trace_note")]
        indexes = [models.Index(fields=["workspace", "updated_at"], name="trace_note_recent")]

    def __str__(self) -> str:
        return f"{self.trace_id}: {', '.join(self.tags)}"
