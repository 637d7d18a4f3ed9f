"""Throughput of passage embedding, measured for `bench_assembly`: the provider call the background
embedder makes (`embeddings.embed_passages`), batch by batch, after one untimed warm-up batch (the
local model loads on first use). Its tokens are counted in the default model's tiktoken encoding, a
stand-in for the embedding model's own tokenizer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings

from apps.core import embeddings, tokenizer


@dataclass(frozen=True)
class EmbeddingRate:
    items: int
    batch_size: int
    seconds: float
    tokens: int

    @property
    def items_per_s(self) -> float:
        return self.items / self.seconds if self.seconds else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


def embedding_rate(*, texts: list[str], batch_size: int) -> EmbeddingRate:
    """Embed `texts` in batches of `batch_size` and time it (the first batch warms up, untimed)."""
    embeddings.embed_passages(texts[:batch_size])
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        embeddings.embed_passages(texts[start : start + batch_size])
    seconds = time.perf_counter() - started
    tokens = sum(tokenizer.count_tokens(text, encoding) for text in texts)
    return EmbeddingRate(items=len(texts), batch_size=batch_size, seconds=seconds, tokens=tokens)
