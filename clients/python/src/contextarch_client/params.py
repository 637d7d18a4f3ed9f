"""The keyword arguments of the client's calls, typed once for the sync and the async client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict


class ContextParams(TypedDict, total=False):
    """The body of `POST /api/v1/context/` (see the API table of the README); omitted means the API's default."""

    layer: int
    layer_external_id: str
    query: str
    query_vector: Sequence[float]
    token_budget: int
    model: str
    profile: str
    format: Literal["json", "markdown", "text"]
    template: str
    kinds: Sequence[str]
    types: Sequence[str]
    since: str
    until: str
    min_confidence: float
    group_id: str
    agent_type: str
    iteration: int
    conversation_id: str
    message: int  # compile from this message: the window is its branch, back from it
    context_window: int
    tokens_used: int
    ranking: str
    expand_related: int
    error: str
    timeout_ms: int
    user: str
    include_superseded: bool


class HistoryParams(TypedDict, total=False):
    """`GET /api/v1/history/`: give `query`, `task` or `ids`."""

    query: str
    task: str
    ids: Sequence[int]
    layer: int
    limit: int
    format: Literal["json", "markdown", "text"]
    model: str


class ItemFields(TypedDict, total=False):
    """An item's writable fields (`kind` and `content` are required by the API)."""

    kind: str
    content: str
    type: str
    title: str
    external_id: str
    created_at: str
    role: str
    parent: int
    task_ids: Sequence[str]
    confidence: float
    priority: str
    group_id: str
    agent_types: Sequence[str]
    source_refs: Sequence[str]
    importance: float
    pinned: bool
    metadata: dict[str, Any]


class AttemptParams(TypedDict, total=False):
    """`POST /api/v1/attempts/` (`outcome` is required: failed or succeeded)."""

    layer: int
    layer_external_id: str
    group_id: str
    agent_type: str
    iteration: int
    outcome: Literal["failed", "succeeded"]
    error: str
    solution: str
