"""Error-pattern hints as a context candidate source: known fixes for the agent's current error.

The error is the request's `error` (redacted at the service edge) or, when the request has none,
the error of the session's last attempt if that attempt failed. Patterns above
settings.ERROR_HINT_MIN_CONFIDENCE that match its signature (exactly, or by similarity) become
`error_hint` candidates, which the engine ranks above ordinary items. Two or three indexed
queries, no model, no LLM.
"""

from __future__ import annotations

from django.conf import settings

from apps.assembly.engine import Candidate
from apps.assembly.sources import SourceRequest
from apps.error_patterns.selectors import last_failed_error, patterns_match
from apps.error_patterns.signature import error_signature

HINT_MIN_SIMILARITY = 0.5
MAX_HINTS = 3


class ErrorHintSource:
    name = "error_hints"

    def candidates(self, request: SourceRequest) -> list[Candidate]:
        error = request.error
        if not error.strip():
            error = last_failed_error(
                workspace_id=request.workspace_id,
                layer_ids=(request.layer_id, *request.window_layer_ids),
                agent_type=request.agent_type,
                group_id=request.group_id,
            )
        if not error.strip():
            return []
        matches = patterns_match(
            workspace_id=request.workspace_id,
            signature=error_signature(error),
            min_confidence=settings.ERROR_HINT_MIN_CONFIDENCE,
            threshold=HINT_MIN_SIMILARITY,
            limit=MAX_HINTS,
            with_solution=True,
        )
        return [
            Candidate(
                id=pattern.pk,
                source="error_hint",
                kind="error_hint",
                type="",
                layer_id=request.layer_id,
                layer_name="known fixes",
                content=f"{pattern.solution}\n(for: {pattern.error_excerpt[:200]})",
                title="Known fix",
                created_at=pattern.last_seen,
                confidence=round(pattern.confidence, 3),
                importance=similarity,
                metadata={"match": round(similarity, 3), "occurrences": pattern.occurrences},
            )
            for similarity, pattern in matches
        ]
