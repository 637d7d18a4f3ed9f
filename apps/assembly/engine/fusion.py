"""The engine's order of search hits: the shared score fusion (apps/core/fusion.py) over candidates."""

from __future__ import annotations

from collections.abc import Sequence

from apps.assembly.engine.types import Candidate
from apps.core.fusion import fused_scores


def fusion_scores(hits: Sequence[Candidate], *, vector: float, keyword: float) -> dict[tuple[str, int], float]:
    """Each hit's fused score, `vector` and `keyword` weighting the two scaled scores."""
    return fused_scores(((c.key, c.vector_similarity, c.keyword_score) for c in hits), vector=vector, keyword=keyword)
