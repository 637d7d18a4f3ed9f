"""LoCoMo vectors for the recall-by-scope curve: the real embeddings of the development set's turns
(the base that generated items jitter, as the bench's passages are) and of its questions (the queries).

Embedding the 3,122 turns takes minutes of a core, so the vectors are kept under VAR_DIR, keyed by the
file's hash and the configured model: a second run reads them back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from apps.bench.evaluation.locomo import DEFAULT_PATH, locomo_load
from apps.core import embeddings

BATCH = 64


@dataclass(frozen=True)
class LocomoVectors:
    """The turns' texts and passage vectors, and the scored questions' query vectors."""

    texts: list[str]
    passages: np.ndarray
    queries: np.ndarray


def _embedded(path: Path, texts: list[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    if path.exists():
        return np.load(path)
    vectors = np.concatenate([embed(texts[n : n + BATCH]) for n in range(0, len(texts), BATCH)])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors.astype(np.float32))
    return vectors.astype(np.float32)


def locomo_vectors(*, path: Path = DEFAULT_PATH) -> LocomoVectors:
    """The development set's vectors (embedded once per file and model, then read from VAR_DIR)."""
    dataset = locomo_load(path=path)
    texts = [turn.content for turn in dataset.turns]
    questions = [question.question for question in dataset.questions]
    key = hashlib.sha256(f"{dataset.sha256}:{embeddings.model_label()}".encode()).hexdigest()[:16]
    cache = Path(settings.VAR_DIR) / "bench" / f"locomo-{key}"
    provider = embeddings.get_provider()
    passages = _embedded(cache / "passages.npy", texts, embeddings.embed_passages)
    queries = _embedded(cache / "queries.npy", questions, provider.embed_queries)
    return LocomoVectors(texts=texts, passages=passages, queries=queries)
