"""The assembly record of each answer: what was asked, what came out, where the time went and why.

Records keep the request in the one JSON shape (apps/assembly/recorded.py) with the query and the
agent's error redacted (agents paste logs and keys into them); retrieval still searched with them as sent.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from django.conf import settings

from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.recorded import request_to_record
from apps.assembly.results import ContextResult
from apps.assembly.scope import cached_record_fields, record_fields
from apps.assembly.services.assembling import Outcome
from apps.assembly.services.cache import CachedContext
from apps.assembly.services.record_writer import WRITER
from apps.engine.types import Chunk
from apps.metrics.registry import ASSEMBLY_LATENCY, ASSEMBLY_LAYERS, ASSEMBLY_TOKENS
from apps.workspaces.models import ApiKey, Workspace


def chunk_tokens(chunks: Iterable[Chunk]) -> list[list[Any]]:
    """Each chunk's item kind, layer id and tokens, for the dashboard's token mix."""
    return [[chunk.kind, chunk.layer, chunk.tokens] for chunk in chunks]


def stored_query(*, workspace_id: int, query: str) -> str:
    """The query as records keep it: redacted."""
    if not query:
        return query
    from apps.redaction.services import text_redact

    return text_redact(workspace_id=workspace_id, text=query).text


def _redact_query(fields: dict[str, Any]) -> dict[str, Any]:
    """The record's fields with the query and the agent's error redacted (run by the writer, before the insert)."""
    workspace_id, request = fields["workspace"].pk, dict(fields["request"])
    for name in ("query", "error"):
        if name in request:
            request[name] = stored_query(workspace_id=workspace_id, query=request[name])
    return {**fields, "request": request}


def record_assembled(
    *,
    workspace: Workspace,
    params: ContextParams,
    outcome: Outcome,
    result: ContextResult,
    api_key: ApiKey | None,
    origin: str = RecordOrigin.AGENT,
) -> None:
    """The record of a freshly assembled `result` (queued for the writer; trace kept for a sample)."""
    started = time.perf_counter()
    r = outcome.resolved
    trace = [*(outcome.result.trace if outcome.result else ()), *outcome.extra_trace]
    sampled = random.random() < settings.TRACE_SAMPLE_RATE
    fields: dict[str, Any] = {
        "workspace": workspace,
        "trace_id": uuid.UUID(result.trace_id),
        "layer": r.layer,
        "api_key": api_key,
        "origin": origin,
        # The query and error are redacted by the writer (_redact_query), off the request thread.
        "request": request_to_record(
            params=params,
            resolved={
                "layer": r.layer.pk,
                "token_budget": result.token_budget,
                "model": r.model,
                "format": r.fmt,
                "types": list(r.types),
                "zone": r.zone,
                "ranking": r.scorer_name,
                "weights": asdict(r.weights),  # the score's weights as resolved (profile over defaults)
                "agent_type": r.agent_type,
                "template": r.template.name if r.template else None,
            },
        ),
        "model": r.model,
        "encoding": r.tokenizer.encoding,
        "tokens_used": result.total_tokens,
        "token_budget": result.token_budget,
        "items_included": len(result.chunks),
        "candidates_considered": len(outcome.ranked) + len(outcome.extra_trace),
        "overflow_count": result.overflow_count,
        "truncated_count": result.truncated_count,
        "elapsed_ms": result.elapsed_ms,
        "assembly_cache_hit": False,
        "embedding_cache_hit": outcome.embedding_cache_hit,
        "warnings": list(result.warnings),
        "partial": result.partial,
        "zone": result.zone,
        "chunk_tokens": chunk_tokens(result.chunks),
        "sampled": sampled,
        "trace": [entry.as_dict() for entry in trace] if sampled else [],
        "context": result.context if sampled else "",
        **record_fields(params=params, resolved=r, chunks=result.chunks),
    }
    outcome.timings.add("record", (time.perf_counter() - started) * 1000)
    fields["timings"] = outcome.timings.rounded()
    WRITER.put(fields, _redact_query)
    ASSEMBLY_LATENCY.observe(result.elapsed_ms)
    ASSEMBLY_TOKENS.observe(result.total_tokens)
    ASSEMBLY_LAYERS.observe(len({c.layer for c in result.chunks}))


def record_cache_hit(
    *,
    workspace: Workspace,
    params: ContextParams,
    cached: CachedContext,
    elapsed_ms: float,
    api_key: ApiKey | None,
    origin: str = RecordOrigin.AGENT,
) -> None:
    """The record of an answer served from the assembly cache (its trace is the original's)."""
    result = cached.result
    fields = dict(
        workspace=workspace,
        layer_id=cached.layer_id,
        api_key=api_key,
        origin=origin,
        request={"cached_from": result.trace_id, "query": params.query},
        model=result.model,
        encoding=result.encoding,
        tokens_used=result.total_tokens,
        token_budget=result.token_budget,
        items_included=len(result.chunks),
        candidates_considered=0,
        overflow_count=result.overflow_count,
        truncated_count=result.truncated_count,
        elapsed_ms=elapsed_ms,
        assembly_cache_hit=True,
        embedding_cache_hit=None,
        warnings=list(result.warnings),
        zone=result.zone,
        chunk_tokens=chunk_tokens(result.chunks),
        timings={"cache": elapsed_ms},
        sampled=False,
        trace=[],
        **cached_record_fields(scope=cached.scope, chunks=result.chunks),
    )
    WRITER.put(fields, _redact_query)
    ASSEMBLY_LATENCY.observe(elapsed_ms)
