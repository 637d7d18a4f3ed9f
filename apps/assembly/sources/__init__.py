"""The gather pipeline's vocabulary: one request every candidate source reads, what one source found,
and what the sources run so far gathered (settings.CONTEXT_SOURCES, run in order by `pipeline.gather`).

Every gatherer is a source: the search hits and pinned items (`hits.py`), the turns next to them
(`neighbours.py`), the conversation window (`window.py`), related items (`related.py`), layer
summaries (`summaries.py`), error-pattern hints (`error_hints.py`) and conversation communities
(`communities.py`). A source reads the request and the gathering so far (a later source builds on
an earlier one's output: related items are seeded by the hits, the summaries use the search's
query vector) and returns a `Found`; it never fails the request: the pipeline turns its error into
its `failed()` warning and goes on with the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from apps.assembly.deadline import Deadline
from apps.assembly.degraded import Degraded, degraded
from apps.assembly.params import ContextParams
from apps.assembly.resolve import Resolved
from apps.assembly.timings import StageTimes
from apps.engine import Candidate, TraceEntry
from apps.engine.floor import HitFloor
from apps.engine.types import Reason
from apps.layers.filters import ItemFilters
from apps.layers.selectors import LayerTree
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class GatherRequest:
    """What every candidate source may read: the request, its resolution, the layers in scope (and
    the item filters over them), the conversation window's layers, the query vector (or its embedding
    still running: only the search waits for it), and the deadline and stage clock they share."""

    workspace: Workspace
    params: ContextParams
    resolved: Resolved
    tree: LayerTree
    layer_names: dict[int, str]
    ancestors: tuple[int, ...]  # nearest first
    own: tuple[int, ...]
    descendants: tuple[int, ...]
    filters: ItemFilters  # the searched layers and the request's filters (no group: it ranks, it filters nothing)
    window_layers: tuple[int, ...]  # the layers whose messages form the conversation window
    deadline: Deadline
    timings: StageTimes
    query_vector: np.ndarray | None | Callable[[], np.ndarray | None] = None  # callable: still being computed


@dataclass(frozen=True)
class Searched:
    """What the query's search left for the sources after it: its best hits (engine/floor.py), the
    vector it used (None: there was none), and the turn each message hit answers."""

    floor: HitFloor = field(default_factory=HitFloor)
    query_vector: np.ndarray | None = None
    parent_of: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Found:
    """One source's answer: its new candidates, earlier ones it revised (same source and id, kept in
    their place), what it left out and why (an earlier candidate named here is taken out), its
    warnings, and the candidates it could not build ("item 12")."""

    candidates: tuple[Candidate, ...] = ()
    revised: tuple[Candidate, ...] = ()
    left_out: tuple[TraceEntry, ...] = ()
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    searched: Searched | None = None  # the search's, for the sources after it


@dataclass(frozen=True)
class Gathered:
    """The sources' candidates so far, in the order found, what they left out, their warnings in the
    order the sources ran, the candidates not yet named in a warning, and the search's results."""

    candidates: tuple[Candidate, ...] = ()
    left_out: tuple[TraceEntry, ...] = ()
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    searched: Searched = field(default_factory=Searched)

    def adding(self, found: Found) -> Gathered:
        """This gathering with one more source's answer."""
        revised = {(c.source, c.id): c for c in found.revised}
        out = {(e.source, e.id) for e in found.left_out}
        kept = [revised.get((c.source, c.id), c) for c in (*self.candidates, *found.candidates)]
        return Gathered(
            candidates=tuple(c for c in kept if (c.source, c.id) not in out),
            left_out=(*self.left_out, *found.left_out),
            warnings=(*self.warnings, *found.warnings),
            skipped=(*self.skipped, *found.skipped),
            searched=self.searched if found.searched is None else found.searched,
        )


class CandidateSource:
    """A gatherer of candidates, named in settings.CONTEXT_SOURCES by its dotted path.

    `past_deadline`: the source runs even once the deadline has passed (a few indexed queries whose
    candidates matter most when the agent is failing); one that is bounded by it checks the deadline
    itself and names what it skipped (`deadline.skip`)."""

    name: str = "candidates"
    past_deadline: bool = True

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        raise NotImplementedError

    def failed(self) -> str:
        """The warning when `gather` raised (counted in /metrics)."""
        return degraded(Degraded.SOURCE_FAILED, f"{self.name} were skipped: the source failed")


@functools.cache
def configured_sources() -> tuple[CandidateSource, ...]:
    return tuple(import_string(path)() for path in settings.CONTEXT_SOURCES)


def left_out(c: Candidate, reason: str = Reason.FILTERED) -> TraceEntry:
    """The trace entry of a candidate left out before ranking, and why."""
    return TraceEntry(
        id=c.id,
        source=c.source,
        external_id=c.external_id,
        kind=c.kind,
        type=c.type,
        layer=c.layer_id,
        score=0.0,
        parts={},
        decision="excluded",
        reason=reason,
        depth="",
        tokens=0,
        origin=c.origin,
    )
