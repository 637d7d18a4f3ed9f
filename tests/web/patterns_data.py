"""An error pattern as the pattern pages show it."""

from __future__ import annotations

from django.utils import timezone

from apps.error_patterns.models import ErrorPattern
from apps.workspaces.models import Workspace


def pattern_of(workspace: Workspace, signature: str = "TimeoutError: upstream <N> ms") -> ErrorPattern:
    now = timezone.now()
    return ErrorPattern.objects.create(
        workspace=workspace,
        signature=signature,
        error_excerpt="TimeoutError: upstream 5000 ms (token [REDACTED])",
        solution="Raise the client timeout to 10 s.",
        confidence=0.7,
        occurrences=3,
        failures=1,
        first_seen=now,
        last_seen=now,
    )
