"""Reference points for the engine's recall, pure over ChunkViews and a token counter.

- recency window: the most recent turns that fit the budget, what a chat client keeps by default;
- plain fused retrieval: reciprocal-rank fusion of a BM25 keyword ranking and a cosine ranking of
  the stored passage embeddings, packed whole in fused order. The engine should beat the first
  easily and the second clearly.

The fused baseline is computed here, over one conversation's turns, rather than through the
product's search modules, so it stays a fixed reference while the engine and its retrieval change.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from apps.assembly.evaluation.dataset import Turn
from apps.assembly.evaluation.recall import ChunkView

SEPARATOR = "\n\n"
RRF_K = 60
BM25_K1 = 1.2
BM25_B = 0.75
_WORD = re.compile(r"\w+")
# PostgreSQL's english configuration drops these too; without them BM25 ranks by "the" and "I".
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have how i in is it its me my of on or our"
    " so than that the their them then there these they this to us was we were what when where which who"
    " why will with you your".split()
)


def _render(turn_role: str, text: str) -> str:
    return f"{turn_role}: {text}"


def _fill(
    chunks: Sequence[ChunkView], *, budget: int, count: Callable[[str], int], contiguous: bool
) -> list[ChunkView]:
    """Take chunks while their estimated cost fits (skip or stop at one that does not), then drop
    the tail until the exact count of the joined text fits."""
    sep_cost = count(SEPARATOR)
    taken: list[ChunkView] = []
    used = 0
    for chunk in chunks:
        cost = count(chunk.text) + (sep_cost if taken else 0)
        if used + cost <= budget:
            taken.append(chunk)
            used += cost
        elif contiguous:
            break
    while taken and count(SEPARATOR.join(c.text for c in taken)) > budget:
        taken.pop()
    return taken


def pack_in_order(*, chunks: Sequence[ChunkView], budget: int, count: Callable[[str], int]) -> list[ChunkView]:
    """Whole chunks in the given order, skipping any that would push the joined text over budget."""
    return _fill(chunks, budget=budget, count=count, contiguous=False)


def recency_window(*, turns: Sequence[Turn], budget: int, count: Callable[[str], int]) -> list[ChunkView]:
    """The newest turns, newest first, rendered "role: text", up to the first that does not fit."""
    newest_first = sorted(turns, key=lambda t: t.created_at, reverse=True)
    chunks = [ChunkView(external_id=t.id, text=_render(t.role, t.text)) for t in newest_first]
    return _fill(chunks, budget=budget, count=count, contiguous=True)


def rrf_fuse(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    """Keys ordered by reciprocal-rank fusion (sum of 1 / (k + rank)); ties keep first-seen order."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: -scores[key])


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def bm25_ranking(*, query: str, docs: Mapping[str, str]) -> list[str]:
    """Keys of the documents sharing a term with the query, by Okapi BM25, best first."""
    terms = set(_terms(query))
    bags = {key: Counter(_terms(text)) for key, text in docs.items()}
    if not terms or not bags:
        return []
    mean_len = sum(sum(b.values()) for b in bags.values()) / len(bags) or 1.0
    df = {t: sum(1 for b in bags.values() if t in b) for t in terms}
    scores: dict[str, float] = {}
    for key, bag in bags.items():
        length = sum(bag.values())
        score = 0.0
        for t in terms:
            if bag[t]:
                idf = math.log(1 + (len(bags) - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * bag[t] * (BM25_K1 + 1) / (bag[t] + BM25_K1 * (1 - BM25_B + BM25_B * length / mean_len))
        if score > 0:
            scores[key] = score
    return sorted(scores, key=lambda key: -scores[key])


def cosine_ranking(*, query_vector: np.ndarray, vectors: Mapping[str, np.ndarray]) -> list[str]:
    """Keys by cosine similarity of their vector to the query, best first."""
    q = query_vector / (np.linalg.norm(query_vector) or 1.0)
    scores = {key: float(np.dot(q, v) / (np.linalg.norm(v) or 1.0)) for key, v in vectors.items()}
    return sorted(scores, key=lambda key: -scores[key])
