"""The engine's data: candidates in, chunks and a trace entry per candidate out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

Counter = Callable[[str], int]
"""Exact token count of a string in the target model's tokenizer."""


class Source(StrEnum):
    """Where a chunk comes from (the API's `chunks[].source`; the schema's enum is this list)."""

    ITEM = "item"
    SUMMARY = "summary"  # a layer summary
    ERROR_HINT = "error_hint"  # an error pattern's fix
    COMMUNITY = "community"  # a conversation community's summary, standing in for its far-away members


SOURCES = tuple(str(source) for source in Source)


@dataclass(frozen=True)
class Rung:
    """One version of a candidate's text on its compression ladder (richest first)."""

    depth: str  # items: full | summary | title; layer summaries: detailed | paragraph | sentence
    text: str
    prefix: bool = False  # the text is a leading part of the rung above (an extractive lead)


@dataclass(frozen=True)
class Candidate:
    """Something that may go into the context, with every signal ranking and packing use."""

    id: int
    kind: str
    type: str
    layer_id: int
    layer_name: str
    content: str
    created_at: datetime
    source: str = "item"
    title: str = ""
    external_id: str | None = None
    pinned: bool = False
    importance: float = 0.5
    confidence: float | None = None
    priority: str = ""
    group_id: str = ""
    agent_types: tuple[str, ...] = ()
    helpfulness: float = 0.5  # strategies: raised and lowered by agents' feedback
    role: str = ""
    distance: int | None = None  # turns back from the newest message of the conversation window
    rungs: tuple[Rung, ...] = ()  # empty: derived from content and title (see ladder.py)
    vector_similarity: float | None = None
    vector_rank: int | None = None
    keyword_score: float | None = None
    keyword_rank: int | None = None
    # The item's own metadata, carried for callers and never read by the engine: whatever a user
    # stores there (any keys, any JSON value) cannot change how a candidate is ranked or packed.
    metadata: Any = field(default_factory=dict)
    origin: str = ""  # where it came from (engine/candidates.py ORIGINS); "" when not said
    # The engine's own marks, set by the candidate builders (engine/candidates.py), never by user data.
    summary: str | None = None  # the item's stored summary rung (its `metadata.summary` when a string)
    neighbour_of: int | None = None  # a turn said next to this message hit (rank: a share of its place)
    related_via: int | None = None  # reached along relationships from this item ...
    related_hops: int = 0  # ... in this many hops
    inherited_relevance: float = 0.0  # relevance given by its builder (a related hit's share, a community's)
    stands_in_for: tuple[int, ...] = ()  # window messages this candidate replaces (a community summary)
    stale: bool = False  # a layer summary whose last regeneration failed
    superseded_by: int | None = None  # the newer item that replaces this one (left out unless asked for)

    @property
    def key(self) -> tuple[str, int]:
        return (self.source, self.id)

    @property
    def searched(self) -> bool:
        """Whether a search returned it (a summary may have a similarity to the query and no rank)."""
        return bool(self.vector_rank or self.keyword_rank)


@dataclass(frozen=True)
class Scored:
    """A candidate with its final score and the parts the score was made of."""

    candidate: Candidate
    score: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A piece of the assembled context, as returned to the caller."""

    id: int
    source: str
    external_id: str | None
    kind: str
    type: str
    layer: int
    layer_name: str
    text: str
    depth: str
    tokens: int
    score: float
    truncated: bool
    pinned: bool
    created_at: datetime
    confidence: float | None


class Reason(StrEnum):
    """Why a candidate was left out (the trace's `reason` for an excluded one; the pages say each in words)."""

    OVER_BUDGET = "over_budget"
    OVER_LIMIT = "over_limit"
    ZONE = "zone"
    DUPLICATE = "duplicate"
    DUPLICATE_TEXT = "duplicate_text"  # a summary whose every sentence is already in the context
    DEADLINE = "deadline"
    FAILED = "failed"
    HIDDEN_BY_DISTANCE = "hidden_by_distance"
    FILTERED = "filtered"
    KIND_FILTER = "kind_filter"
    OTHER_BRANCH = "other_branch"
    IN_COMMUNITY = "in_community"
    SUPERSEDED = "superseded"  # a newer item replaces it: the entry's `superseded_by` names it
    IN_PROMPT = "in_prompt"  # the caller's prompt carries it already (ContextParams.exclude)
    PROFILE_EXCLUDED = "profile_excluded"  # the request's agent profile excludes the item (its excluded_items)
    # A layer or community summary less similar to the query than its best hits (engine/floor.py)
    BELOW_FLOOR = "below_floor"


@dataclass(frozen=True)
class TraceEntry:
    """The decision about one candidate: included (at a depth, maybe truncated) or excluded, and why."""

    id: int
    source: str
    external_id: str | None
    kind: str
    type: str
    layer: int
    score: float
    parts: dict[str, float]
    decision: str  # "included" | "truncated" | "excluded"
    reason: str  # "fits", "cut at a sentence boundary", "over_budget", "over_limit", "zone", "duplicate", ...
    depth: str
    tokens: int
    origin: str = ""  # the candidate's origin (engine/candidates.py ORIGINS)
    # "over_budget" in packing order: the tokens still free when it came up (its cost `tokens` did
    # not fit), so a trace can say how many more it needed; None for every other decision.
    room: int | None = None
    superseded_by: int | None = None  # reason "superseded": the item that replaces it

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "external_id": self.external_id,
            "kind": self.kind,
            "type": self.type,
            "layer": self.layer,
            "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in self.parts.items()},
            "decision": self.decision,
            "reason": self.reason,
            "depth": self.depth,
            "tokens": self.tokens,
            "origin": self.origin,
        }
        if self.room is not None:
            out["room"] = self.room
        if self.superseded_by is not None:
            out["superseded_by"] = self.superseded_by
        return out


@dataclass(frozen=True)
class Assembled:
    """The engine's result: the context string, its exact token count, chunks and trace."""

    context: str
    total_tokens: int
    chunks: tuple[Chunk, ...]
    trace: tuple[TraceEntry, ...]
    truncated_count: int
    overflow_count: int
    failed: tuple[tuple[str, int], ...] = ()  # keys of candidates that could not be rendered or counted
