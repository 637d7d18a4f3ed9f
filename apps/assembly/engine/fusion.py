"""The order of search hits: a weighted sum of each search's score, normalised over the hits.

Reciprocal-rank fusion throws the scores away: the 3rd and the 30th keyword hit differ by
1/63 - 1/90, whatever their BM25 scores say, so a turn that one search finds far ahead of the
rest is outranked by turns both searches find mediocre. Here the cosine similarity is min-max
scaled over the vector hits (e5 puts every pair above ~0.7, so the raw value has no zero) and
the keyword score is scaled by the best one; a hit missing from one search gets 0 there. On the
LoCoMo development set this order packs more evidence than RRF at every budget (see README,
Benchmarks).
"""

from __future__ import annotations

from collections.abc import Sequence

from apps.assembly.engine.types import Candidate


def fusion_scores(hits: Sequence[Candidate], *, vector: float, keyword: float) -> dict[tuple[str, int], float]:
    """Each hit's fused score, `vector` and `keyword` weighting the two scaled scores."""
    sims = [c.vector_similarity for c in hits if c.vector_similarity is not None]
    kws = [c.keyword_score for c in hits if c.keyword_score is not None]
    low, high = (min(sims), max(sims)) if sims else (0.0, 0.0)
    best = max(kws) if kws else 0.0
    out: dict[tuple[str, int], float] = {}
    for c in hits:
        score = 0.0
        if c.vector_similarity is not None:
            score += vector * ((c.vector_similarity - low) / (high - low) if high > low else 1.0)
        if c.keyword_score is not None and best > 0:
            score += keyword * max(c.keyword_score, 0.0) / best
        out[c.key] = score
    return out
