"""The engine's data: candidates in, chunks and a trace entry per candidate out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Counter = Callable[[str], int]
"""Exact token count of a string in the target model's tokenizer."""

# Where a candidate comes from: an item, a layer summary, or an error-pattern hint.
SOURCES = ("item", "summary", "error_hint")


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
    metadata: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""  # where it came from (engine/candidates.py ORIGINS); "" when not said

    @property
    def key(self) -> tuple[str, int]:
        return (self.source, self.id)


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

    def as_dict(self) -> dict[str, Any]:
        return {
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


@dataclass(frozen=True)
class Assembled:
    """The engine's result: the context string, its exact token count, chunks and trace."""

    context: str
    total_tokens: int
    chunks: tuple[Chunk, ...]
    trace: tuple[TraceEntry, ...]
    truncated_count: int
    overflow_count: int
