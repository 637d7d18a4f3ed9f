"""Topic clusters of message embeddings: deterministic average-linkage agglomeration.

Sentence embeddings of one conversation share a large common direction (e5 puts nearly every
pair above 0.8 cosine), so vectors are first centred on the conversation's own mean; what is
left separates topics. The dendrogram is then cut at the number of clusters with the best
silhouette; a conversation whose best cut is weaker than `min_silhouette` is one topic.
Pure numpy, no randomness: ties go to the lowest index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_SILHOUETTE = 0.1


def _normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def _dendrogram(sim: np.ndarray, max_clusters: int) -> dict[int, list[list[int]]]:
    """Partitions by number of clusters (only those ≤ `max_clusters` are kept)."""
    n = len(sim)
    s = sim.astype(np.float64, copy=True)
    np.fill_diagonal(s, -np.inf)
    clusters: dict[int, list[int]] = {i: [i] for i in range(n)}
    cuts: dict[int, list[list[int]]] = {}
    if n <= max_clusters:
        cuts[n] = [list(c) for c in clusters.values()]
    while len(clusters) > 1:
        flat = int(np.argmax(s))
        i, j = sorted(divmod(flat, n))
        si, sj = len(clusters[i]), len(clusters[j])
        merged = (s[i] * si + s[j] * sj) / (si + sj)  # average linkage
        s[i, :] = merged
        s[:, i] = merged
        s[i, i] = -np.inf
        s[j, :] = -np.inf
        s[:, j] = -np.inf
        clusters[i] = clusters[i] + clusters.pop(j)
        if len(clusters) <= max_clusters:
            cuts[len(clusters)] = [sorted(c) for c in clusters.values()]
    return cuts


def _silhouette(distance: np.ndarray, labels: np.ndarray) -> float:
    n = len(labels)
    ids = np.unique(labels)
    if len(ids) < 2:
        return -1.0
    # mean distance from every point to every cluster
    means = np.stack([distance[:, labels == c].sum(axis=1) for c in ids], axis=1)
    sizes = np.array([(labels == c).sum() for c in ids], dtype=np.float64)
    own = np.searchsorted(ids, labels)
    own_size = sizes[own]
    a = np.where(own_size > 1, means[np.arange(n), own] / np.maximum(own_size - 1, 1), 0.0)
    other = means / sizes
    other[np.arange(n), own] = np.inf
    b = other.min(axis=1)
    score = np.where(own_size > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-12), 0.0)
    return float(score.mean())


def topic_clusters(
    vectors: Sequence[Sequence[float]] | np.ndarray, *, min_size: int, min_silhouette: float = MIN_SILHOUETTE
) -> list[list[int]]:
    """Indices of `vectors` grouped by topic, each group sorted, groups ordered by their first index.

    Groups smaller than `min_size` are dropped (their messages belong to no topic). Fewer than
    `min_size` vectors make no topic at all.
    """
    x = np.asarray(vectors, dtype=np.float64)
    n = len(x)
    if n < max(min_size, 1) or x.ndim != 2:
        return []
    if n < 2 * min_size:
        return [list(range(n))]
    centred = _normalise(x - x.mean(axis=0))
    sim = centred @ centred.T
    max_k = max(2, n // max(min_size, 1))
    cuts = _dendrogram(sim, max_k)
    distance = 1.0 - sim
    best_k, best_score = 1, min_silhouette
    for k in range(2, max_k + 1):
        if k not in cuts:
            continue
        labels = np.empty(n, dtype=np.int64)
        for label, members in enumerate(cuts[k]):
            labels[members] = label
        score = _silhouette(distance, labels)
        if score > best_score + 1e-9:
            best_k, best_score = k, score
    groups = [list(range(n))] if best_k == 1 else cuts[best_k]
    kept = [sorted(g) for g in groups if len(g) >= min_size]
    return sorted(kept, key=lambda g: g[0])
