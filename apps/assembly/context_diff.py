"""Two assembled contexts compared: the chunks one added and removed against the other, and the tokens.

The one comparison of contexts, used by the console's replay (a recorded answer against the same
request run now) and by the profile pages (a draft against the saved profile, one profile against
another). It reads decision traces in their stored shape (`TraceEntry.as_dict()`): a chunk is
named by its (source, id), so an item, a layer summary and an error hint never collide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

INCLUDED = frozenset({"included", "truncated"})

ChunkKey = tuple[str, int]


@dataclass(frozen=True)
class ContextDiff:
    """`after` against `before`: chunks only `after` has (added), only `before` has (removed), tokens."""

    added: tuple[ChunkKey, ...]  # in `after`'s packing order
    removed: tuple[ChunkKey, ...]  # in `before`'s packing order
    kept: int
    tokens_before: int
    tokens_after: int

    @property
    def token_difference(self) -> int:
        return self.tokens_after - self.tokens_before

    @property
    def unchanged(self) -> bool:
        return not self.added and not self.removed and self.token_difference == 0


def included_keys(trace: Iterable[Mapping[str, Any]]) -> list[ChunkKey]:
    """The (source, id) of every candidate that went into the context, in packing order, once each."""
    keys: list[ChunkKey] = []
    seen: set[ChunkKey] = set()
    for entry in trace:
        key = (str(entry["source"]), int(entry["id"]))
        if entry.get("decision") in INCLUDED and key not in seen:
            seen.add(key)
            keys.append(key)
    return keys


def context_diff(
    *, before: Iterable[Mapping[str, Any]], after: Iterable[Mapping[str, Any]], tokens_before: int, tokens_after: int
) -> ContextDiff:
    """Compare two decision traces (and their contexts' exact token totals)."""
    old, new = included_keys(before), included_keys(after)
    old_set, new_set = set(old), set(new)
    return ContextDiff(
        added=tuple(key for key in new if key not in old_set),
        removed=tuple(key for key in old if key not in new_set),
        kept=len(old_set & new_set),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
    )
