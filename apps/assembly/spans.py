"""The spans of a context assembly and of a history search, on the GenAI semantic conventions.

An assembly is a `retrieval` span (`gen_ai.operation.name`), named `retrieval {workspace}` as the
conventions name a retrieval by its data source; a history search is a `search_memory` span. Their
stages (resolve, embedding, vector_search, keyword_search, ranking, packing, record) are child spans
opened by `StageTimes.stage`, and the best-ranked candidates' decisions are span events. Only when
the GenAI content opt-in is set (apps/core/telemetry/config.py) do the query and the chunks' text
go on the spans, and then redacted as the records' queries are. Never the API key, the `error` text
or any header.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from opentelemetry.trace import Span

from apps.assembly.params import ContextParams
from apps.assembly.results import ContextResult
from apps.assembly.sources.hits import candidate_limit
from apps.core import telemetry
from apps.engine import TraceEntry
from apps.workspaces.models import Workspace

CANDIDATE_EVENT = "contextarch.candidate"


def assembly_started(
    *, workspace: Workspace, params: ContextParams, run: str | None = None, origin: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The name and first attributes of an assembly's span (those known before it runs: the ones a
    sampler may look at). `run`: "preview" (a page's preview, every decision shown, its what-if runs
    inside) or "warm_up" (a context that passed its deadline, finished in the background); None for
    an agent's request. `origin`: agent or page, as the assembly record says."""
    attributes = {
        "contextarch.run": run,
        "contextarch.origin": origin,
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": workspace.slug,
        "gen_ai.request.model": params.model,
        "gen_ai.conversation.id": params.conversation_id,
        "contextarch.layer.id": params.layer_id,
        "contextarch.layer.external_id": params.layer_external_id,
        "contextarch.profile": params.profile,
        "contextarch.request.token_budget": params.token_budget,
    }
    return f"retrieval {workspace.slug}", {k: v for k, v in attributes.items() if v is not None}


def assembly_annotate(
    span: Span,
    *,
    workspace: Workspace,
    params: ContextParams,
    result: ContextResult,
    layer_id: int,
    decisions: Iterable[TraceEntry] = (),
    candidates: int | None = None,
) -> None:
    """The answer's figures on the span, and one event per best-ranked candidate (`decisions`: the
    engine's trace; a cache hit has none: its decisions are the original assembly's)."""
    telemetry.span_attributes(
        span,
        {
            "gen_ai.request.model": result.model,
            "contextarch.layer.id": layer_id,
            "contextarch.token_budget": result.token_budget,
            "gen_ai.retrieval.top_k": candidate_limit(result.token_budget),  # each search's, for this budget
            "contextarch.total_tokens": result.total_tokens,
            "contextarch.encoding": result.encoding,
            "contextarch.tokens_estimated": result.tokens_estimated,
            "contextarch.zone": result.zone,
            "contextarch.format": result.format,
            "contextarch.chunks": len(result.chunks),
            "contextarch.candidates": candidates,
            "contextarch.truncated_count": result.truncated_count,
            "contextarch.overflow_count": result.overflow_count,
            "contextarch.cached": result.cached,
            "contextarch.partial": result.partial,
            "contextarch.warnings": len(result.warnings),
            "contextarch.trace_id": result.trace_id,  # the console's trace of this answer
        },
    )
    if telemetry.content_captured() and params.query:
        span.set_attribute("gen_ai.retrieval.query.text", _redacted(workspace, params.query))
    texts = {(c.source, c.id): c.text for c in result.chunks} if telemetry.content_captured() else {}
    best = sorted(decisions, key=lambda e: -e.score)[: settings.TRACING_CANDIDATE_EVENTS]
    for rank, entry in enumerate(best, start=1):
        attributes = candidate_attributes(entry, rank=rank)
        if (text := texts.get((entry.source, entry.id))) is not None:
            attributes["contextarch.candidate.text"] = _redacted(workspace, text)
        span.add_event(CANDIDATE_EVENT, attributes)


def candidate_attributes(entry: TraceEntry, *, rank: int) -> dict[str, Any]:
    """One candidate's decision: what it is, where it came from, its score, and in at which depth or
    left out and why."""
    attributes = {
        "contextarch.candidate.rank": rank,
        "contextarch.candidate.id": entry.id,
        "contextarch.candidate.source": entry.source,
        "contextarch.candidate.external_id": entry.external_id,
        "contextarch.candidate.kind": entry.kind,
        "contextarch.candidate.type": entry.type,
        "contextarch.candidate.layer_id": entry.layer,
        "contextarch.candidate.origin": entry.origin,
        "contextarch.candidate.score": round(entry.score, 6),
        "contextarch.candidate.decision": entry.decision,
        "contextarch.candidate.depth": entry.depth,
        "contextarch.candidate.reason": entry.reason,
        "contextarch.candidate.tokens": entry.tokens,
    }
    return {k: v for k, v in attributes.items() if v not in (None, "")}


def history_started(*, workspace: Workspace, layer_id: int | None) -> tuple[str, dict[str, Any]]:
    """The name and first attributes of a history search's span: the memory store is the layer
    searched (with its descendants), or the workspace."""
    store = f"layer:{layer_id}" if layer_id is not None else f"workspace:{workspace.slug}"
    return "search_memory", {"gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": store}


def history_annotate(span: Span, *, workspace: Workspace, query: str, answer: dict[str, Any]) -> None:
    """The history answer's figures: messages found (`gen_ai.memory.record.count`), tokens, warnings."""
    telemetry.span_attributes(
        span,
        {
            "gen_ai.memory.record.count": len(answer["messages"]),
            "gen_ai.request.model": answer["model"],
            "contextarch.total_tokens": answer["total_tokens"],
            "contextarch.format": answer["format"],
            "contextarch.communities": len(answer["communities"]),
            "contextarch.warnings": len(answer["warnings"]),
        },
    )
    if telemetry.content_captured() and query:
        span.set_attribute("gen_ai.memory.query.text", _redacted(workspace, query))


def _redacted(workspace: Workspace, text: str) -> str:
    from apps.redaction.services import text_redact

    return text_redact(workspace_id=workspace.pk, text=text).text
