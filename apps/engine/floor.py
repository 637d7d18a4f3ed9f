"""Which search hits the query is really about: a floor relative to the query's best hits.

A vector search always returns its k nearest items, so in a workspace of a few hundred items
every turn of a conversation is a "hit" of any query. A hit counts as strong (the query asked
for it) when its cosine similarity is within VECTOR_MARGIN of the best hit's (e5 puts every pair
of texts above ~0.7, so only the distance from the best says anything), or when its keyword score
is at least KEYWORD_SHARE of the best keyword score. Only a strong hit keeps its whole ladder at
any conversation distance (the conversation presets decide for the rest: engine/policy.py).

A candidate that no search returned but whose similarity to the query is known (a layer or a
community summary: `Candidate.searched` is false) must clear the same floor to be in the context
at all: a summary pays its tokens only when the query is about what it summarises as much as about
its best single hit, or as much as the closest summary (`raised`, `below`). Without a query vector or
any vector hit there is no floor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from apps.engine.types import Candidate

VECTOR_MARGIN = 0.03
KEYWORD_SHARE = 0.5


@dataclass(frozen=True)
class HitFloor:
    """The best scores of one query's two searches (None: that search found nothing or did not run)."""

    best_similarity: float | None = None
    best_keyword: float | None = None

    @classmethod
    def of(cls, *, similarities: Iterable[float], keyword_scores: Iterable[float]) -> HitFloor:
        sims, kws = list(similarities), list(keyword_scores)
        return cls(best_similarity=max(sims) if sims else None, best_keyword=max(kws) if kws else None)

    def strong(self, c: Candidate) -> bool:
        """Whether `c` is one of the hits the query is about (within the floor of either search)."""
        if c.vector_similarity is not None and self.best_similarity is not None:
            if c.vector_similarity >= self.best_similarity - VECTOR_MARGIN:
                return True
        if c.keyword_score is not None and self.best_keyword:
            return c.keyword_score >= KEYWORD_SHARE * self.best_keyword
        return False

    def raised(self, candidates: Iterable[Candidate]) -> HitFloor:
        """The floor with the summaries' similarities counted among the best: a summary closer to the
        query than every hit sets the bar for the others (only where a vector search found hits)."""
        if self.best_similarity is None:
            return self
        sims = [c.vector_similarity for c in candidates if c.vector_similarity is not None and not c.searched]
        return replace(self, best_similarity=max([self.best_similarity, *sims]))

    def below(self, c: Candidate) -> bool:
        """Whether `c`, known only by its similarity to the query (no search returned it), is under the floor."""
        if c.vector_similarity is None or c.searched or self.best_similarity is None:
            return False
        return not self.strong(c)
