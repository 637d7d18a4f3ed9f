"""The reference points beside the service, computed here on the same turns in the same run, so they
stay fixed while the engine changes (LoCoMo's README defines the first three):

- bm25: `bm25s` (English stopwords, Snowball stemmer) over the turn contents, positive scores only;
- dense: the embedding provider's own passage vectors of the contents (no layer name in front,
  unlike the stored ones) against the query vector, cosine;
- fusion: reciprocal-rank fusion (k = 60) of both lists;
- recency: the newest turns, what a chat client keeps by default.

Each turn is ranked alone and packed whole as the set renders it (`Turn.rendered`), best-first (the
newest first for recency), until the budget is full.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from django.conf import settings

from apps.bench.evaluation.data import Turn
from apps.core import embeddings

Progress = Callable[[str], None]
BASELINES = ("fusion", "bm25", "dense", "recency")
SEPARATOR = "\n\n"
RRF_K = 60
EMBED_BATCH = 64
_STEMMER = Stemmer.Stemmer("english")
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG


def rrf_fuse(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    """Keys ordered by reciprocal-rank fusion (sum of 1 / (k + rank)); ties keep first-seen order."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: -scores[key])


def _tokens(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


class TurnIndex:
    """Turns searchable by BM25 and by cosine over their plain passage vectors (one row each)."""

    def __init__(self, *, turns: Sequence[Turn], vectors: np.ndarray) -> None:
        self.ids = [t.id for t in turns]
        self._bm25 = bm25s.BM25()
        self._bm25.index(_tokens([t.content for t in turns]), show_progress=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._unit = vectors / np.where(norms == 0, 1.0, norms)

    def bm25(self, query: str) -> list[str]:
        """Turn ids with a positive BM25 score, best first."""
        known = [w for w in _tokens([query])[0] if w in self._bm25.vocab_dict]
        if not known:
            return []
        scores = self._bm25.get_scores(known)
        order = np.argsort(-scores, kind="stable")
        return [self.ids[i] for i in order if scores[i] > 0]

    def dense(self, query_vector: np.ndarray) -> list[str]:
        """Every turn id by cosine similarity to the query, best first."""
        q = query_vector / (np.linalg.norm(query_vector) or 1.0)
        order = np.argsort(-(self._unit @ q), kind="stable")
        return [self.ids[i] for i in order]

    def rankings(self, *, query: str, query_vector: np.ndarray) -> dict[str, list[str]]:
        """The three ranked baselines' orders (recency needs no query: `Packer.newest`)."""
        keyword, dense = self.bm25(query), self.dense(query_vector)
        return {"fusion": rrf_fuse([keyword, dense]), "bm25": keyword, "dense": dense}


class Packer:
    """Whole rendered turns packed under a budget, their token costs counted once."""

    def __init__(self, *, turns: Sequence[Turn], count: Callable[[str], int]) -> None:
        self._count = count
        self.text = {t.id: t.rendered for t in turns}
        self.cost = {k: count(v) for k, v in self.text.items()}
        self.sep = count(SEPARATOR)
        self.newest = [t.id for t in sorted(turns, key=lambda t: t.created_at, reverse=True)]
        self._recent: dict[int, list[str]] = {}

    def pack(self, order: Sequence[str], budget: int, *, contiguous: bool = False) -> list[str]:
        """Turns in `order` while they fit, skipping one that does not (stopping there if
        `contiguous`); the joined text is then recounted exactly and the tail dropped until it fits."""
        taken: list[str] = []
        used = 0
        for key in order:
            cost = self.cost[key] + (self.sep if taken else 0)
            if used + cost <= budget:
                taken.append(key)
                used += cost
            elif contiguous:
                break
        while taken and self._count(SEPARATOR.join(self.text[k] for k in taken)) > budget:
            taken.pop()
        return taken

    def recent(self, budget: int) -> list[str]:
        """The recency baseline: the newest turns, up to the first that does not fit."""
        if budget not in self._recent:
            self._recent[budget] = self.pack(self.newest, budget, contiguous=True)
        return self._recent[budget]


def plain_vectors(*, turns: Sequence[Turn], progress: Progress, cache_dir: Path | None = None) -> np.ndarray:
    """Passage vectors of the turn contents, one row per turn, cached on disk by provider, model and
    texts (a `--reuse` loop must not embed the set twice)."""
    provider = embeddings.get_provider()
    texts = [t.content for t in turns]
    digest = hashlib.sha256("\x00".join([provider.name, provider.model, *texts]).encode()).hexdigest()[:20]
    folder = cache_dir or Path(settings.VAR_DIR) / "eval"
    path = folder / f"plain-{digest}.npy"
    if path.exists():
        return np.load(path)
    parts = []
    for start in range(0, len(texts), EMBED_BATCH):
        parts.append(embeddings.embed_passages(texts[start : start + EMBED_BATCH]))
        progress(f"baseline passages: {min(start + EMBED_BATCH, len(texts))}/{len(texts)}")
    vectors = np.vstack(parts) if parts else np.zeros((0, provider.dimensions), dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors
