"""Error-pattern hints as a context candidate source: known fixes for the agent's current error.

Matching here is deliberately simple (a normalized signature, then word overlap); the full
capture and normalization of error signatures plugs in behind the same interface.
"""

from __future__ import annotations

import re

from apps.assembly.engine import Candidate
from apps.assembly.sources import SourceRequest
from apps.error_patterns.models import ErrorPattern

HINT_MIN_CONFIDENCE = 0.7
_VOLATILE = re.compile(r"0x[0-9a-f]+|[0-9a-f]{8}-[0-9a-f-]{27}|\d+|'[^']*'|\"[^\"]*\"|(/[\w.-]+)+", re.IGNORECASE)
_WORD = re.compile(r"[a-z_]{3,}")


def rough_signature(error: str) -> str:
    """The error with numbers, ids, paths and quoted values replaced, lowercased and squeezed."""
    return " ".join(_VOLATILE.sub("#", error.lower()).split())[:1000]


def _overlap(a: str, b: str) -> float:
    wa, wb = set(_WORD.findall(a)), set(_WORD.findall(b))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


class ErrorHintSource:
    name = "error_hints"

    def candidates(self, request: SourceRequest) -> list[Candidate]:
        if not request.error.strip():
            return []
        signature = rough_signature(request.error)
        patterns = list(
            ErrorPattern.objects.filter(workspace_id=request.workspace_id, confidence__gt=HINT_MIN_CONFIDENCE)
            .order_by("-confidence", "-last_seen")
            .only("id", "signature", "solution", "confidence", "last_seen", "error_excerpt")[:200]
        )
        matches = []
        for pattern in patterns:
            similarity = 1.0 if pattern.signature == signature else _overlap(pattern.signature, signature)
            if similarity >= 0.5:
                matches.append((similarity, pattern))
        matches.sort(key=lambda m: (-m[0], -m[1].confidence))
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
                confidence=pattern.confidence,
                importance=similarity,
                metadata={"match": round(similarity, 3)},
            )
            for similarity, pattern in matches[:3]
        ]
