"""The order of search hits: a weighted sum of each search's score, normalised over the hits.

Reciprocal-rank fusion throws the scores away: the 3rd and the 30th keyword hit differ by
1/63 - 1/90, whatever their BM25 scores say, so a turn that one search finds far ahead of the
rest is outranked by turns both searches find mediocre. Here the cosine similarity is min-max
scaled over the vector hits (e5 puts every pair above ~0.7, so the raw value has no zero) and
the keyword score is scaled by the best one; a hit missing from one search gets 0 there. On the
LoCoMo development set this order packs more evidence than RRF at every budget (see README,
Benchmarks). One function for the engine's ranking (engine/fusion.py) and the shared hybrid
search (apps/layers/hybrid_search.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

# The default weights of the two scaled scores, chosen on the LoCoMo development set.
VECTOR_WEIGHT = 0.9
KEYWORD_WEIGHT = 1.1

K = TypeVar("K", bound=Hashable)


def fused_scores(
    hits: Iterable[tuple[K, float | None, float | None]], *, vector: float, keyword: float
) -> dict[K, float]:
    """Each hit's fused score from (key, cosine similarity or None, keyword score or None)."""
    hits = list(hits)
    sims = [sim for _, sim, _ in hits if sim is not None]
    kws = [kw for _, _, kw in hits if kw is not None]
    low, high = (min(sims), max(sims)) if sims else (0.0, 0.0)
    best = max(kws) if kws else 0.0
    out: dict[K, float] = {}
    for key, sim, kw in hits:
        score = 0.0
        if sim is not None:
            score += vector * ((sim - low) / (high - low) if high > low else 1.0)
        if kw is not None and best > 0:
            score += keyword * max(kw, 0.0) / best
        out[key] = score
    return out
