"""The assembly cache: a finished result under a key of the request and the workspace's content version."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np
from django.conf import settings

from apps.assembly.params import ContextParams
from apps.assembly.results import ContextResult
from apps.core import cache
from apps.core.versions import content_version


@dataclass(frozen=True)
class CachedContext:
    """A stored answer: the result, its layer and its consumption scope (a hit records them again).

    Immutable all the way down (the result is a frozen dataclass of tuples; the scope a read-only
    view of its own copy), since in local memory every hit shares this very object.
    """

    result: ContextResult
    layer_id: int
    scope: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", MappingProxyType(dict(self.scope)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (CachedContext, (self.result, self.layer_id, dict(self.scope)))  # a mapping proxy does not pickle


_PLAIN = tuple(f.name for f in fields(ContextParams) if f.name != "query_vector")


def cache_key(*, workspace_id: int, params: ContextParams) -> str:
    """Identical requests against unchanged content share a key (see apps/core/versions.py).

    The query vector enters as its float32 bytes: `dataclasses.asdict` deep-copies and JSON-encodes
    every float, which cost more than the rest of a cache hit.
    """
    plain = json.dumps([getattr(params, name) for name in _PLAIN], default=str)
    digest = hashlib.sha256(f"{workspace_id}\x00{content_version(workspace_id)}\x00{plain}\x00".encode())
    if params.query_vector is not None:
        digest.update(np.asarray(params.query_vector, dtype=np.float32).tobytes())
    return f"{cache_prefix(workspace_id)}{digest.hexdigest()}"


def cache_prefix(workspace_id: int) -> str:
    """What every cached context of the workspace's keys starts with (an erasure drops them all)."""
    return f"ctx:{workspace_id}:"


def cached_drop(*, workspace_id: int) -> int:
    """Delete the workspace's cached contexts (under any content version); how many were found."""
    return cache.delete_prefix(cache_prefix(workspace_id))


def cached_get(key: str) -> CachedContext | None:
    """The stored answer, or None (also when the cache is off, down, or holds an older shape)."""
    if not settings.ASSEMBLY_CACHE_SECONDS:
        return None
    value = cache.get_object(key)
    return value if isinstance(value, CachedContext) else None


def cached_put(key: str, entry: CachedContext) -> None:
    """Store a finished answer. Never a partial one: the next request must get the whole context."""
    if settings.ASSEMBLY_CACHE_SECONDS and not entry.result.partial:
        cache.set_object(key, entry, settings.ASSEMBLY_CACHE_SECONDS)
