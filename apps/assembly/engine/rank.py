"""Ranking: fuse vector and keyword retrieval (reciprocal rank fusion) with recency and importance.

Ranking happens after retrieval and before formatting. Every part of a score is kept, so the
trace can explain it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from apps.assembly.engine.types import Candidate, Scored

RRF_K = 60


@dataclass(frozen=True)
class RankWeights:
    """How much each signal counts; relevance (fused retrieval rank) dominates by default."""

    vector: float = 1.0
    keyword: float = 1.0
    relevance: float = 0.8
    recency: float = 0.1
    importance: float = 0.1
    recency_half_life_days: float = 30.0


def _rrf(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (RRF_K + rank)


def score_candidate(candidate: Candidate, *, weights: RankWeights, now: datetime) -> Scored:
    """The candidate's score in [0, 1] and its parts."""
    fused_max = (weights.vector + weights.keyword) / (RRF_K + 1)
    fused = weights.vector * _rrf(candidate.vector_rank) + weights.keyword * _rrf(candidate.keyword_rank)
    relevance = fused / fused_max if fused_max > 0 else 0.0
    age_days = max((now - candidate.created_at).total_seconds(), 0.0) / 86400.0
    recency = math.pow(0.5, age_days / weights.recency_half_life_days)
    importance = min(max(candidate.importance, 0.0), 1.0)
    total_weight = weights.relevance + weights.recency + weights.importance
    score = weights.relevance * relevance + weights.recency * recency + weights.importance * importance
    score = score / total_weight if total_weight > 0 else 0.0
    parts = {"relevance": relevance, "recency": recency, "importance": importance}
    if candidate.vector_similarity is not None:
        parts["vector_similarity"] = candidate.vector_similarity
        parts["vector_rank"] = float(candidate.vector_rank or 0)
    if candidate.keyword_score is not None:
        parts["keyword_score"] = candidate.keyword_score
        parts["keyword_rank"] = float(candidate.keyword_rank or 0)
    if candidate.pinned:
        parts["pinned"] = 1.0
    return Scored(candidate=candidate, score=score, parts=parts)


def rank(candidates: list[Candidate], *, weights: RankWeights, now: datetime) -> list[Scored]:
    """Pinned first (seed 004 property 1), then by score; ties by id for determinism."""
    scored = [score_candidate(c, weights=weights, now=now) for c in candidates]
    return sorted(scored, key=lambda s: (not s.candidate.pinned, -s.score, s.candidate.id))
