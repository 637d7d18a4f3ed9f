"""Typed results: the API's response shapes as pydantic models.

Each top-level model names the operation whose answer it parses (`operation`); a test of the
repository compares every model's field names and required-ness with the OpenAPI schema the
service generates (or, where the schema leaves an answer untyped, with a real answer), so these
shapes cannot drift silently. Unknown fields are kept (`extra="allow"`), so a newer server does
not break an older client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    # (method, path, status) of the operation whose answer this model is; nested models have none.
    operation: ClassVar[tuple[str, str, str] | None] = None


class Chunk(Model):
    """One piece of an assembled context, in the order it appears in `context`."""

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


class Overflow(Model):
    count: int
    message: str


class ContextResult(Model):
    """`POST /api/v1/context/`: the context string (exactly `total_tokens` ≤ `token_budget`) and its chunks."""

    operation = ("post", "/api/v1/context/", "200")
    context: str
    chunks: list[Chunk]
    total_tokens: int
    token_budget: int
    truncated_count: int
    overflow: Overflow
    zone: str
    warnings: list[str]
    trace_id: str
    elapsed_ms: float
    model: str
    encoding: str
    tokens_estimated: bool
    format: str
    cached: bool
    partial: bool


class StreamEvent(Model):
    """One Server-Sent Event of `GET /api/v1/context/stream`: `chunk` (a Chunk's fields) or `complete`."""

    event: str
    data: dict[str, Any]


class Layer(Model):
    operation = ("get", "/api/v1/layers/{layer_id}/", "200")
    id: int
    kind: str
    name: str
    parent: int | None = None
    external_id: str | None = None
    created_at: datetime
    updated_at: datetime


class Item(Model):
    operation = ("get", "/api/v1/items/{item_id}/", "200")
    id: int
    layer: int
    kind: str
    type: str = ""
    title: str = ""
    content: str
    external_id: str | None = None
    token_count: int = 0
    content_hash: str
    importance: float = 0.5
    pinned: bool = False
    metadata: Any = None
    created_at: datetime
    updated_at: datetime
    role: str = ""
    parent: int | None = None
    task_ids: list[str] = []
    confidence: float | None = None
    priority: str = ""
    group_id: str = ""
    agent_types: list[str] = []
    source_refs: list[str] = []
    access_count: int
    last_accessed_at: datetime | None
    embedded: bool
    seen_count: int = 1  # writes this item stands for: itself and the repeats merged into it
    merged_external_ids: list[str] = []
    superseded_by: int | None = None  # the newer item that replaces it (left out of contexts)


class BulkCreated(Model):
    operation = ("post", "/api/v1/items/bulk/", "201")
    ids: list[int]  # per item sent, the item that holds it
    merged: list[int]  # indexes of the items sent that were merged into an item they repeat


class ErrorPattern(Model):
    id: int
    signature: str
    error_excerpt: str
    solution: str
    confidence: float = 0.0
    occurrences: int = 0
    failures: int = 0
    first_seen: datetime
    last_seen: datetime


class AttemptRecorded(Model):
    """`POST /api/v1/attempts/`: the attempt, and the pattern it captured or the hints it lowered."""

    operation = ("post", "/api/v1/attempts/", "201")
    id: int
    layer: int
    agent_type: str = ""
    group_id: str = ""
    iteration: int | None = None
    outcome: str
    error: str = ""
    signature: str = ""
    solution: str = ""
    pattern: int | None = None
    created_at: datetime | None = None
    captured: ErrorPattern | None
    new_pattern: bool
    lowered: list[int]


class PatternMatch(ErrorPattern):
    similarity: float
    exact: bool


class ErrorPatternMatches(Model):
    operation = ("post", "/api/v1/error-patterns/match/", "200")
    signature: str
    matches: list[PatternMatch]


class ConsumptionRecorded(Model):
    operation = ("post", "/api/v1/consumption/", "200")
    trace_id: str
    injected: list[int]
    used: list[int]
    ratio: float | None
    reported_at: datetime
    duplicate: bool


class TokenCount(Model):
    operation = ("post", "/api/v1/tokens/", "200")
    model: str
    tokens: int
    encoding: str
    exact: bool
    margin: float
    known: bool
    context_window: int | None
    calls: int
    warnings: list[str]


class HistoryMessage(Model):
    id: int
    layer: int
    role: str
    title: str
    content: str
    created_at: datetime
    parent: int | None
    task_ids: list[str]
    importance: float
    relevance: float | None


class HistoryCommunity(Model):
    id: int
    kind: str
    key: str
    title: str
    summary: str
    layer: int


class HistoryResult(Model):
    """`GET /api/v1/history/`: past messages (oldest first) and the context string they render to."""

    operation = ("get", "/api/v1/history/", "200")
    context: str
    format: str
    total_tokens: int
    model: str
    messages: list[HistoryMessage]
    communities: list[HistoryCommunity]
    warnings: list[str]


class Trace(Model):
    """`GET /api/v1/traces/{trace_id}/`: the record of one assembly and the decision on each candidate."""

    operation = ("get", "/api/v1/traces/{trace_id}/", "200")
    trace_id: str
    created_at: datetime
    layer: int | None
    request: dict[str, Any]
    model: str
    encoding: str
    tokens_used: int
    token_budget: int
    items_included: int
    candidates_considered: int
    overflow_count: int
    truncated_count: int
    elapsed_ms: float
    assembly_cache_hit: bool
    embedding_cache_hit: bool | None
    timings: dict[str, Any]
    warnings: list[str]
    sampled: bool
    consumption: dict[str, Any]
    trace: list[dict[str, Any]]
    origin: str = "agent"  # "page" for a run from the pages (preview, compare, replay)
    proxy: dict[str, Any] | None = None  # the proxied call that carried it: upstream, model, usage, our count


class Status(Model):
    """`GET /api/v1/status/`: counts, the embedding backlog, the background queue and the providers."""

    operation = ("get", "/api/v1/status/", "200")
    workspace: str
    layers: int
    items: int
    items_pending_embedding: int
    embedding_items_per_s: float | None = None  # the background embedder's recent rate
    embedding_eta_seconds: float | None = None  # the backlog at that rate; None before a rate is known
    embedding_model_change: dict[str, Any] | None = None  # {"from", "to", "since"} while re-embedding
    background: dict[str, Any]
    providers: dict[str, Any]


class ErasurePlace(Model):
    """What one place held of an erasure's target and what became of it."""

    found: int
    removed: int
    rewritten: int
    regenerated: int
    cleared: int


class ErasureNamed(Model):
    """What an erasure named: the item ids as given; the prefix, user and text as HMACs (None: not named)."""

    item_ids: list[int]
    external_id_prefix: str | None
    user: str | None
    text: str | None


class Erasure(Model):
    """`GET /api/v1/erasure/{erasure_id}/`: an erasure's (or dry run's) receipt, per place (`items`, ...)."""

    operation = ("get", "/api/v1/erasure/{erasure_id}/", "200")
    id: int
    dry_run: bool = False
    dry_run_of: int | None = None
    state: str = ""  # running, done or failed
    named: ErasureNamed
    places: dict[str, ErasurePlace]
    failed_at: str = ""
    api_key: str | None
    created_at: datetime
    finished_at: datetime | None = None


class WorkspaceImported(Model):
    """`POST /api/v1/workspace/import/`: the workspace the archive came from and the rows restored per part."""

    operation = ("post", "/api/v1/workspace/import/", "201")
    source: dict[str, Any]
    rows: dict[str, int]


class SupersessionItem(Model):
    """One side of a supersession proposal: the item as it is now."""

    id: int
    kind: str
    type: str
    title: str
    content: str
    created_at: datetime
    superseded_by: int | None


class Supersession(Model):
    """`POST /api/v1/supersessions/{proposal_id}/accept/` (and `reject/`, and the list's rows): a proposal
    that `new` supersedes `old`, how close they are, why, who proposed it (`rules` or `llm`), its state."""

    operation = ("post", "/api/v1/supersessions/{proposal_id}/accept/", "200")
    id: int
    layer: int
    old: SupersessionItem
    new: SupersessionItem
    similarity: float
    reason: str
    detector: str = ""
    state: str = ""  # pending, accepted or rejected
    created_at: datetime
    decided_at: datetime | None = None
    decided_by: str = ""


T = TypeVar("T", bound=Model)


class Page(BaseModel, Generic[T]):
    """One page of a list (`count`, `next`, `previous`, `results`)."""

    model_config = ConfigDict(frozen=True)
    count: int
    next: str | None = None
    previous: str | None = None
    results: list[T]


# The list operations: each answers a `Page` of its model (the drift test checks the page and its rows).
PAGED_OPERATIONS: dict[tuple[str, str, str], type[Model]] = {
    ("get", "/api/v1/layers/", "200"): Layer,
    ("get", "/api/v1/items/", "200"): Item,
    ("get", "/api/v1/erasure/", "200"): Erasure,
    ("get", "/api/v1/supersessions/", "200"): Supersession,
}


class ErrorDetail(Model):
    code: str
    message: str
    details: dict[str, Any]


class ErrorBody(Model):
    """Every error answer: `{"error": {"code", "message", "details"}}` (the schema's `Error`)."""

    error: ErrorDetail


class BulkLoadResult(BaseModel):
    """What `bulk_load` did: the ids created, in input order, and whether all became searchable."""

    model_config = ConfigDict(frozen=True)
    ids: list[int]
    chunks: int
    searchable: bool
