"""Error-pattern hints as a context candidate source: known fixes for the agent's current error.

The error is the request's `error` (redacted at the service edge) or, when the request has none,
the error of the session's last attempt if that attempt failed. Patterns above
settings.ERROR_HINT_MIN_CONFIDENCE that match its signature (exactly, or by similarity) become
`error_hint` candidates, which the engine ranks above ordinary items. Two or three indexed
queries, no model, no LLM.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.conf import settings

from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest
from apps.core.versions import content_version
from apps.engine import Candidate
from apps.error_patterns.selectors import last_failed_error, patterns_match
from apps.error_patterns.signature import error_signature

HINT_MIN_SIMILARITY = 0.5
MAX_HINTS = 3
MAX_REMEMBERED = 4096

_lock = threading.Lock()
_last_errors: OrderedDict[tuple[object, ...], str] = OrderedDict()


@dataclass(frozen=True)
class HintQuery:
    """What the hints are looked up by: the request's error, else its session's last failed one."""

    workspace_id: int
    layer_id: int
    error: str = ""
    agent_type: str = ""
    group_id: str = ""
    window_layer_ids: tuple[int, ...] = ()  # the conversation window's layers

    @classmethod
    def of(cls, request: GatherRequest) -> HintQuery:
        r, params = request.resolved, request.params
        return cls(
            workspace_id=request.workspace.pk,
            layer_id=r.layer.pk,
            error=params.error,
            agent_type=r.agent_type,
            group_id=params.group_id,
            window_layer_ids=request.window_layers,
        )


def _session_error(request: HintQuery) -> str:
    """The session's last failed error, remembered per content version (every attempt draws a new one),
    so the usual request, whose session has no new attempt, costs no query."""
    layer_ids = (request.layer_id, *request.window_layer_ids)
    key = (request.workspace_id, content_version(request.workspace_id), layer_ids, request.agent_type, request.group_id)
    with _lock:
        if key in _last_errors:
            _last_errors.move_to_end(key)
            return _last_errors[key]
    error = last_failed_error(
        workspace_id=request.workspace_id, layer_ids=layer_ids, agent_type=request.agent_type, group_id=request.group_id
    )
    with _lock:
        _last_errors[key] = error
        while len(_last_errors) > MAX_REMEMBERED:
            _last_errors.popitem(last=False)
    return error


class ErrorHintSource(CandidateSource):
    name = "error_hints"

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        return Found(candidates=tuple(hint_candidates(HintQuery.of(request))))


def hint_candidates(request: HintQuery) -> list[Candidate]:
    """The known fixes for the error, best match first (at most MAX_HINTS)."""
    error = request.error
    if not error.strip():
        error = _session_error(request)
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
            origin="hint",
        )
        for similarity, pattern in matches
    ]
