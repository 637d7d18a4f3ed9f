"""Throughput of passage embedding (items/s and tokens/s) for `bench_embedding` and `bench_assembly`.

Measures the provider call the background embedder makes (`embeddings.embed_passages`), batch by
batch, after one untimed warm-up batch (the local model loads on first use). Tokens are counted
in the default model's tiktoken encoding, a stand-in for the embedding model's own tokenizer.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from django.conf import settings

from apps.core import cache, embeddings, tokenizer

RATE_KEY = "embedding-rate"
RATE_SECONDS = 24 * 3600
RATE_WEIGHT = 0.3  # of the newest batch in the moving average


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


_WORDS = (
    "the deploy failed again because the cache was cold and nobody noticed until the morning standup "
    "we moved the weekly review to friday so that marco can join after his trip to lisbon "
    "my sister started a pottery class and she says the wheel is much harder than it looks "
    "latency went up after the release so we rolled back and opened an incident for the api gateway"
).split()


def sample_passages(*, count: int, seed: int = 5) -> list[str]:
    """`count` short conversational turns (8-40 words, like LoCoMo's), reproducible for a seed."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(_WORDS, k=rng.randint(8, 40))).capitalize() + "." for _ in range(count)]


def rate_note(*, items: int, seconds: float) -> None:
    """Fold one embedded batch into the moving average of items/s (shared through the cache, so every
    process's status sees what the background embedder achieves; a lost update only skips a sample)."""
    if items < 1 or seconds <= 0:
        return
    sample = items / seconds
    previous = rate_recent()
    rate = sample if previous is None else (1 - RATE_WEIGHT) * previous + RATE_WEIGHT * sample
    cache.set_value(RATE_KEY, rate, RATE_SECONDS)


def rate_recent() -> float | None:
    """The background embedder's recent items/s (one worker's), or None before its first batch."""
    value = cache.get_value(RATE_KEY)
    return float(value) if isinstance(value, int | float) and value > 0 else None
