"""Context Architect's Python client: `ContextArchitect` (sync) and `AsyncContextArchitect` (async)."""

from __future__ import annotations

from contextarch_client.async_client import AsyncContextArchitect
from contextarch_client.client import ContextArchitect
from contextarch_client.errors import (
    AuthenticationFailed,
    Conflict,
    ConnectionFailed,
    ContextArchError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)
from contextarch_client.models import (
    AttemptRecorded,
    BulkCreated,
    BulkLoadResult,
    Chunk,
    ConsumptionRecorded,
    ContextResult,
    Erasure,
    ErrorPatternMatches,
    HistoryResult,
    Item,
    Layer,
    Page,
    Status,
    StreamEvent,
    Supersession,
    TokenCount,
    Trace,
    WorkspaceImported,
)
from contextarch_client.retry import RetryPolicy

__all__ = [
    "AsyncContextArchitect",
    "AttemptRecorded",
    "AuthenticationFailed",
    "BulkCreated",
    "BulkLoadResult",
    "Chunk",
    "Conflict",
    "ConnectionFailed",
    "ConsumptionRecorded",
    "ContextArchError",
    "ContextArchitect",
    "ContextResult",
    "Erasure",
    "ErrorPatternMatches",
    "HistoryResult",
    "InvalidRequest",
    "Item",
    "Layer",
    "NotFound",
    "Page",
    "PermissionDenied",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Status",
    "StreamEvent",
    "Supersession",
    "TokenCount",
    "Trace",
    "WorkspaceImported",
]
