"""What context assembly returns: frozen results shared by the API, the streams, the pages and the cache."""

from __future__ import annotations

from dataclasses import dataclass

from apps.engine import Chunk, TraceEntry


@dataclass(frozen=True)
class ContextResult:
    """One assembled context as `POST /api/v1/context/` describes it (see serializers.ContextOutput).

    Invariant: `total_tokens` is the exact token count of `context` in `encoding` and never exceeds
    `token_budget`.
    """

    context: str
    chunks: tuple[Chunk, ...]
    total_tokens: int
    token_budget: int
    truncated_count: int
    overflow_count: int
    zone: str
    warnings: tuple[str, ...]
    trace_id: str
    elapsed_ms: float
    model: str
    encoding: str
    tokens_estimated: bool
    format: str
    cached: bool = False  # served from the assembly cache
    partial: bool = False  # the deadline passed; part of the context is missing

    @property
    def overflow_message(self) -> str:
        return f"+{self.overflow_count} more available" if self.overflow_count else ""


@dataclass(frozen=True)
class WhatIf:
    """The same request assembled at another budget (a real run, neither recorded nor cached)."""

    token_budget: int
    tokens_used: int
    items_included: int
    truncated_count: int


@dataclass(frozen=True)
class PreviewResult:
    """What `context_assemble` returns, plus the decision for every candidate and a what-if table."""

    result: ContextResult
    trace: tuple[TraceEntry, ...]
    what_if: tuple[WhatIf, ...]
