"""Vectors of rows that are compared in process, never searched: layer and community summaries.

A workspace has a handful of them per request, so they are stored as float32 bytes (any dimension:
an embedding model change needs no column change) with the label of the model that made them
(`embeddings.model_label()`), and compared with the query here. A vector of another model than the
configured one is not comparable: it counts as missing until the sweep re-embeds its row.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def vector_pack(vector: Iterable[float] | np.ndarray) -> bytes:
    """The bytes stored for a vector (float32, native order)."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def vector_unpack(data: bytes | memoryview | None) -> np.ndarray | None:
    """The vector of stored bytes (None for none)."""
    if data is None:
        return None
    return np.frombuffer(bytes(data), dtype=np.float32)


def similarity(query: np.ndarray, data: bytes | memoryview | None) -> float | None:
    """Cosine similarity of the query and a stored vector; None when there is none or the sizes differ."""
    vector = vector_unpack(data)
    wanted = np.asarray(query, dtype=np.float32).ravel()
    if vector is None or vector.shape != wanted.shape:
        return None
    norms = float(np.linalg.norm(wanted) * np.linalg.norm(vector))
    return float(np.dot(wanted, vector) / norms) if norms > 0 else None
