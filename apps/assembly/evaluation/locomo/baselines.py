"""The development set's reference rankings, computed here on the same turns in the same run.

As its README defines them: each turn ranked alone and rendered `"[<session date>] <content>"`;
BM25 by `bm25s` (English stopwords, Snowball stemmer) over the turn content, positive scores
only; dense by the embedding provider's own passage vectors of the content (no layer name in
front, unlike the stored ones) against the query vector, cosine; hybrid = reciprocal-rank fusion
(k = 60) of both lists. They stay fixed while the engine changes.
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

from apps.assembly.evaluation.baselines import rrf_fuse
from apps.assembly.evaluation.locomo.data import Sample, Turn
from apps.core import embeddings

Progress = Callable[[str], None]
EMBED_BATCH = 64
_STEMMER = Stemmer.Stemmer("english")
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG


def render(turn: Turn) -> str:
    """A turn as the baselines pack it."""
    return f"[{turn.date_text}] {turn.content}"


def _tokens(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


class SampleIndex:
    """One sample's turns, searchable by BM25 and by cosine over plain passage vectors."""

    def __init__(self, *, sample: Sample, vectors: np.ndarray) -> None:
        self.turns = sample.turns
        self.ids = [t.external_id for t in self.turns]
        self._bm25 = bm25s.BM25()
        self._bm25.index(_tokens([t.content for t in self.turns]), show_progress=False)
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
        keyword, dense = self.bm25(query), self.dense(query_vector)
        return {"bm25": keyword, "dense": dense, "fusion": rrf_fuse([keyword, dense])}


def plain_vectors(*, turns: Sequence[Turn], progress: Progress, cache_dir: Path | None = None) -> np.ndarray:
    """Passage vectors of the turn contents, cached on disk by provider, model and texts (the
    reuse loop must not embed the set twice)."""
    provider = embeddings.get_provider()
    texts = [t.content for t in turns]
    digest = hashlib.sha256("\x00".join([provider.name, provider.model, *texts]).encode()).hexdigest()[:20]
    folder = cache_dir or Path(settings.VAR_DIR) / "eval_locomo"
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
