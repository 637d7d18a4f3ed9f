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
