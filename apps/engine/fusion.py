"""The engine's order of search hits: the shared score fusion (apps/core/fusion.py) over candidates.

A hit is also judged by its company (`layer_focus`): the passages around a relevant passage tend
to be relevant too (the cluster hypothesis; passage retrieval scores a passage with its
document). A layer (a session, a document's layer) in which several hits score well lifts all
its hits and their neighbouring turns: a question about an adoption brings the turns of the
conversation about the adoption, not the one turn elsewhere that shares a word with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apps.core.fusion import fused_scores
from apps.engine.types import Candidate


def fusion_scores(hits: Sequence[Candidate], *, vector: float, keyword: float) -> dict[tuple[str, int], float]:
    """Each hit's fused score, `vector` and `keyword` weighting the two scaled scores."""
    return fused_scores(((c.key, c.vector_similarity, c.keyword_score) for c in hits), vector=vector, keyword=keyword)


# How many of a layer's best hits make its score: one strong hit alone is not a topic.
LAYER_TOP_HITS = 3


def layer_focus(hits: Sequence[Candidate], scores: Mapping[tuple[str, int], float]) -> dict[int, float]:
    """Each layer's weight in [0, 1] (1 for the strongest): the sum of its LAYER_TOP_HITS best
    fused scores over the best layer's. Empty unless the hits come from two layers or more (one
    layer alone changes no order)."""
    by_layer: dict[int, list[float]] = {}
    for c in hits:
        by_layer.setdefault(c.layer_id, []).append(scores.get(c.key, 0.0))
    if len(by_layer) < 2:
        return {}
    weight = {layer: sum(sorted(values, reverse=True)[:LAYER_TOP_HITS]) for layer, values in by_layer.items()}
    top = max(weight.values())
    return {layer: w / top for layer, w in weight.items()} if top > 0 else {}
