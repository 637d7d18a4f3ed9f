"""The error patterns app's parts of a workspace archive (apps/core/archive): patterns and attempts.

Hint injections are left out: they count a pattern's failures after a hint over time (the
dashboard's figures), and what they taught is in each pattern's confidence and counters.
"""

from __future__ import annotations

from apps.core.archive.parts import model_part, register
from apps.error_patterns.models import Attempt, ErrorPattern


def register_parts() -> None:
    register(
        model_part(
            name="error_patterns",
            order=80,
            model=ErrorPattern,
            kind="error_pattern",
            fields=(
                "signature",
                "error_excerpt",
                "solution",
                "confidence",
                "occurrences",
                "failures",
                "first_seen",
                "last_seen",
            ),
        ),
        model_part(
            name="attempts",
            order=90,
            model=Attempt,
            fields=(
                "agent_type",
                "group_id",
                "iteration",
                "outcome",
                "error",
                "signature",
                "solution",
                "resolved",
                "created_at",
            ),
            references={"layer": "layer", "pattern": "error_pattern"},
        ),
    )
