"""`GET /api/v1/stats/`: consumption figures (this app) beside the attempt figures (error_patterns)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from apps.consumption.selectors import consumption_stats
from apps.error_patterns.selectors import attempt_stats
from apps.tokens.selectors import token_errors
from apps.workspaces.models import Workspace


def workspace_stats(*, workspace: Workspace, agent_type: str | None = None) -> dict[str, Any]:
    """Consumed / injected packages beside iterations per task group and same-error
    recurrence within a session, both filtered by `agent_type` when given; and per model,
    how far our token counts were from what its upstream reported (`token_counts`: calls, p50 / p95
    of reported / ours - 1)."""
    return {
        "consumption": consumption_stats(workspace_id=workspace.pk, agent_type=agent_type),
        "attempts": attempt_stats(workspace.pk, agent_type=agent_type),
        "token_counts": [asdict(error) for error in token_errors(workspace_id=workspace.pk)],
    }
