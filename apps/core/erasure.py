"""Erasure's hooks (issue 24 item 2): each app forgets its own rows, so the erasure service names no app.

An erasure (`apps/erasure`) names what to forget (`ErasureTarget`) and runs the hooks the apps
registered in their `AppConfig.ready`, in two phases over one `ErasureRun`:
- finders (`finder(name, fn)`) resolve the target to the items to delete (`run.item_ids`) and the
  layers to delete with everything in them (`run.layer_ids`, e.g. the proxy's session of a user), and
  note the layers whose content changes (`run.touched_layers`);
- erasers (`eraser(stage, name, fn)`), by stage: `SOURCE` deletes the items and layers, `DERIVED`
  rebuilds what was made from them (summaries, communities) once they are gone, `RECORDS` rewrites
  what recorded them (assembly records and traces: the text replaced by `MARKER`, the figures kept),
  `ANSWERS` drops stored answers that may hold them (idempotent replays, cached contexts).
A dry run (`run.dry_run`) runs every hook, which only counts (`run.count(...)`) and writes nothing.
Each hook reads and writes only its own app's tables; a text match is case-insensitive.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

MARKER = "[erased]"

# Eraser stages, in the order they run.
SOURCE, DERIVED, RECORDS, ANSWERS = 10, 20, 30, 40


@dataclass(frozen=True)
class ErasureTarget:
    """What to forget: items by id, items whose external id starts with a prefix, what a user said
    (`user`: items whose metadata names them, the proxy's session for them), and a text match."""

    item_ids: tuple[int, ...] = ()
    external_id_prefix: str = ""
    user: str = ""
    text: str = ""


@dataclass
class Place:
    """What one place held of the target and what became of it."""

    found: int = 0
    removed: int = 0
    rewritten: int = 0
    regenerated: int = 0
    cleared: int = 0


@dataclass
class ErasureRun:
    """One erasure as it runs: the target, what the finders resolved it to and each place's counts."""

    workspace_id: int
    target: ErasureTarget
    dry_run: bool
    item_ids: set[int] = field(default_factory=set)
    layer_ids: set[int] = field(default_factory=set)
    touched_layers: set[int] = field(default_factory=set)
    # Names that identify what is erased and that records copy (a deleted layer's external id and name,
    # e.g. "proxy-user:alice"): replaced by the marker wherever a text match would be.
    needles: set[str] = field(default_factory=set)
    places: dict[str, Place] = field(default_factory=dict)

    def texts(self) -> list[str]:
        """The text match and the needles, longest first (so a longer one is replaced whole)."""
        return sorted({t for t in (self.target.text, *self.needles) if t}, key=lambda t: (-len(t), t))

    def count(
        self,
        place: str,
        *,
        found: int = 0,
        removed: int = 0,
        rewritten: int = 0,
        regenerated: int = 0,
        cleared: int = 0,
    ) -> None:
        """Add to a place's counts (a place with nothing found is still listed: it was looked at)."""
        p = self.places.setdefault(place, Place())
        p.found += found
        p.removed += removed
        p.rewritten += rewritten
        p.regenerated += regenerated
        p.cleared += cleared


Hook = Callable[[ErasureRun], None]
FINDERS: list[tuple[int, str, Hook]] = []
ERASERS: list[tuple[int, str, Hook]] = []
LAST = 100  # a finder's order: after every other (the layers' ancestors of what the others found)


def finder(name: str, hook: Hook, *, order: int = 0) -> None:
    """Register a finder (once per name); finders run by `order`, then in registration order."""
    if name not in {n for _, n, _ in FINDERS}:
        FINDERS.append((order, name, hook))


def ordered_finders() -> list[tuple[int, str, Hook]]:
    return sorted(FINDERS, key=lambda entry: entry[0])


def eraser(stage: int, name: str, hook: Hook) -> None:
    """Register an eraser at `stage` (once per name); erasers run by stage, then in registration order."""
    if name not in {n for _, n, _ in ERASERS}:
        ERASERS.append((stage, name, hook))


def ordered_erasers() -> list[tuple[int, str, Hook]]:
    return sorted(ERASERS, key=lambda entry: entry[0])  # stable: registration order within a stage


def like_pattern(text: str) -> str:
    """`text` as an ILIKE pattern that matches it anywhere, its wildcards escaped."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def contains(value: str, text: str) -> bool:
    return bool(text) and text.casefold() in value.casefold()


def scrub(value: str, text: str) -> str:
    """`value` with every occurrence of `text` (any case) replaced by the marker."""
    if not text:
        return value
    return re.sub(re.escape(text), MARKER, value, flags=re.IGNORECASE)


def scrub_all(value: str, texts: list[str]) -> str:
    for text in texts:
        value = scrub(value, text)
    return value
