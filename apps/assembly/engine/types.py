"""The engine's data: candidates in, chunks and a trace entry per candidate out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Counter = Callable[[str], int]
"""Exact token count of a string in the target model's tokenizer."""


@dataclass(frozen=True)
class Candidate:
    """One item that retrieval found (or that is pinned), with its retrieval signals."""

    id: int
    kind: str
    type: str
    layer_id: int
    layer_name: str
    content: str
    created_at: datetime
    title: str = ""
    external_id: str | None = None
    pinned: bool = False
    importance: float = 0.5
    confidence: float | None = None
    vector_similarity: float | None = None
    vector_rank: int | None = None
    keyword_score: float | None = None
    keyword_rank: int | None = None


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
    external_id: str | None
    kind: str
    type: str
    layer: int
    layer_name: str
    text: str
    tokens: int
    score: float
    truncated: bool


@dataclass(frozen=True)
class TraceEntry:
    """The decision about one candidate: included (whole or truncated) or excluded, and why."""

    id: int
    external_id: str | None
    kind: str
    type: str
    layer: int
    score: float
    parts: dict[str, float]
    decision: str  # "included" | "truncated" | "excluded"
    reason: str  # e.g. "fits", "cut at a sentence boundary", "over_budget"
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "external_id": self.external_id,
            "kind": self.kind,
            "type": self.type,
            "layer": self.layer,
            "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in self.parts.items()},
            "decision": self.decision,
            "reason": self.reason,
            "tokens": self.tokens,
        }


@dataclass(frozen=True)
class Assembled:
    """The engine's result: the context string, its exact token count, chunks and trace."""

    context: str
    total_tokens: int
    token_budget: int
    chunks: tuple[Chunk, ...]
    trace: tuple[TraceEntry, ...]
    truncated_count: int
    overflow_count: int
