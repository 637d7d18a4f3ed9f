"""Context assembly: resolve the request, gather candidates, rank, pack, store the trace.

This is the hot path. It loads no model (the query embedder is process-wide), runs a handful
of queries whatever the workspace size, and never waits on an LLM. Anything that fails below
the request's own validation degrades (keyword only, no hints) and says so in `warnings`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.assembly.deadline import Deadline
from apps.assembly.engine import Assembled, RankContext, Scored, TraceEntry, assemble, rank
from apps.assembly.engine.rank import fused_relevance
from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams, params_to_json
from apps.assembly.resolve import Resolved, resolve
from apps.assembly.retrieval import layer_summaries, related_items, retrieve, source_candidates
from apps.assembly.sources import SourceRequest, apply_stand_ins
from apps.consumption.scope import cached_record_fields, record_fields, scope_of
from apps.conversations.access import note_served
from apps.core import background, cache, embeddings, tokenizer
from apps.core.errors import InvalidInput, NotFound
from apps.core.versions import content_version
from apps.layers.filters import ItemFilters
from apps.layers.models import Layer, LayerKind
from apps.layers.selectors import LayerTree, layer_scope, layer_tree
from apps.layers.vectors import vector_available
from apps.metrics.registry import ASSEMBLY_CACHE, ASSEMBLY_LATENCY, ASSEMBLY_LAYERS, ASSEMBLY_TOKENS
from apps.workspaces.models import ApiKey, Workspace


def _record_create(**fields: Any) -> AssemblyRecord:
    """Store the assembly record without waiting for the WAL flush: losing the last few traces
    in a crash is acceptable, adding an fsync to every request is not."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        return AssemblyRecord.objects.create(**fields)


def _query_vector(params: ContextParams, warnings: list[str], deadline: Deadline) -> tuple[Any, bool]:
    if params.query_vector is not None:
        return embeddings.validate_query_vector(list(params.query_vector)), False
    if not vector_available():
        warnings.append("vector search is unavailable on this database; results come from keyword search only")
        return None, False
    if deadline.expired():
        deadline.skip("query embedding")
        return None, False
    left = deadline.remaining_ms()
    try:
        return embeddings.embed_query(params.query, timeout=None if left is None else left / 1000)
    except embeddings.EmbeddingError as exc:  # degrade to keyword search, never fail the request
        warnings.append(f"query embedding failed ({exc.message}); results come from keyword search only")
        return None, False


def _conversation(workspace: Workspace, params: ContextParams, layer: Layer, tree: LayerTree) -> tuple[int, ...]:
    """The layers whose messages form the conversation window (seed 002 distances count from its newest turn)."""
    if params.conversation_id:
        conversation = (
            Layer.objects.filter(
                workspace=workspace,
                external_id=params.conversation_id,
                kind__in=[LayerKind.SESSION, LayerKind.MULTI_SESSION],
            )
            .order_by("id")
            .first()
        )
        if conversation is None:
            raise NotFound(f"conversation {params.conversation_id!r} not found", code="conversation_not_found")
        _, own, descendants = layer_scope(tree=tree, layer_id=conversation.pk)
        return (*own, *descendants)
    if layer.kind == LayerKind.SESSION:
        return (layer.pk,)
    return ()


@dataclass
class Outcome:
    """One assembly before it is recorded: the resolved request, the ranked candidates and the result."""

    resolved: Resolved
    ranked: list[Scored]
    result: Assembled | None  # None: no budget left in this zone, nothing was gathered
    extra_trace: list[TraceEntry]
    warnings: list[str]
    started: float
    partial: bool = False  # a stage was skipped at the deadline


def _assemble(*, workspace: Workspace, params: ContextParams) -> Outcome:
    started = time.perf_counter()
    r = resolve(workspace=workspace, params=params)
    warnings = r.warnings
    if params.expand_related and not 0 <= params.expand_related <= settings.MAX_RELATED_DEPTH:
        raise InvalidInput(f"expand_related must be 0..{settings.MAX_RELATED_DEPTH}", code="invalid_expand_related")
    tree = layer_tree(workspace_id=workspace.pk)
    window_layers = _conversation(workspace, params, r.layer, tree)
    timeout = settings.ASSEMBLY_TIMEOUT_MS if params.timeout_ms is None else params.timeout_ms
    deadline = Deadline(limit_ms=timeout or None, started=started)
    ranked, result, extra_trace = _gather_and_pack(workspace, params, r, tree, window_layers, warnings, deadline)
    if deadline.partial:
        warnings.append(
            f"assembly passed its {timeout} ms deadline: this context lacks {', '.join(deadline.skipped)}; "
            "the full context is being assembled in the background and will be served from the cache"
        )
    stale = {(s.candidate.source, s.candidate.id) for s in ranked if s.candidate.metadata.get("stale")}
    if result is not None and stale:
        names = sorted({c.layer_name for c in result.chunks if (c.source, c.id) in stale})
        if names:
            warnings.append(
                f"stale summaries served for {', '.join(names)}: their last regeneration failed, "
                "they predate the latest changes"
            )
    if result is None or not result.chunks:
        why = (
            "no budget is left in this zone"
            if result is None
            else "nothing fitted the token budget"
            if ranked
            else "no content matched this request"
        )
        warnings.append(f"the context is empty: {why}")
    return Outcome(
        resolved=r,
        ranked=ranked,
        result=result,
        extra_trace=extra_trace,
        warnings=warnings,
        started=started,
        partial=deadline.partial,
    )


def context_assemble(*, workspace: Workspace, params: ContextParams, api_key: ApiKey | None = None) -> dict[str, Any]:
    """Assemble the context for `params` within `workspace`; returns the API response body.

    Invariant: `total_tokens` is the exact token count of `context` in the model's tokenizer and
    never exceeds `token_budget`.
    """
    params = _redacted(workspace, params)
    key = _cache_key(workspace, params)
    cached = cache.get_value(key) if settings.ASSEMBLY_CACHE_SECONDS else None
    if isinstance(cached, dict):
        answer = _respond_cached(workspace, params, cached, api_key)
        _note_hints(workspace, cached["layer"], params.agent_type, params.group_id, answer)
        _note_access(answer)
        return answer
    ASSEMBLY_CACHE.labels(result="miss").inc()
    outcome = _assemble(workspace=workspace, params=params)
    body = _respond(workspace, params, outcome, api_key)
    _note_hints(workspace, outcome.resolved.layer.pk, outcome.resolved.agent_type, params.group_id, body)
    _note_access(body)
    if outcome.partial and 0 <= background.queue_depth() < WARM_QUEUE_LIMIT:
        # Finish in the background; the full context then answers from the cache. Under overload
        # (a long queue) the warm-up is dropped rather than doubling the database's work.
        from apps.assembly.tasks import warm_context

        background.enqueue(warm_context, workspace.pk, params_to_json(params))
    elif settings.ASSEMBLY_CACHE_SECONDS:
        scope = scope_of(params=params, resolved=outcome.resolved)
        cache.set_value(
            key, {"body": body, "layer": outcome.resolved.layer.pk, "scope": scope}, settings.ASSEMBLY_CACHE_SECONDS
        )
    return {**body, "cached": False, "partial": outcome.partial}


def _note_access(body: dict[str, Any]) -> None:
    """Served items count as accessed (seed 002): buffered here, one batched UPDATE in the background."""
    note_served(c["id"] for c in body["chunks"] if c["source"] == "item")


def _redacted(workspace: Workspace, params: ContextParams) -> ContextParams:
    """The request with its `error` redacted, before it reaches the cache key, records, logs or traces."""
    if not params.error:
        return params
    from apps.redaction.services import text_redact

    return replace(params, error=text_redact(workspace_id=workspace.pk, text=params.error).text)


def _stored_query(workspace: Workspace, query: str) -> str:
    """The query as records keep it: redacted (agents paste logs and errors into queries). Retrieval
    still searches with the query as sent."""
    if not query:
        return query
    from apps.redaction.services import text_redact

    return text_redact(workspace_id=workspace.pk, text=query).text


def _note_hints(workspace: Workspace, layer_id: int, agent_type: str, group_id: str, body: dict[str, Any]) -> None:
    """Record the known-fix hints this context carries, so a later failure can lower their confidence."""
    hint_ids = [c["id"] for c in body.get("chunks", ()) if c.get("source") == "error_hint"]
    if not hint_ids:
        return
    from apps.error_patterns.services import hints_injected

    try:
        hints_injected(
            workspace_id=workspace.pk, layer_id=layer_id, agent_type=agent_type, group_id=group_id, pattern_ids=hint_ids
        )
    except Exception:  # bookkeeping must never fail the request (FR-010)
        logging.getLogger(__name__).exception("recording injected hints failed")


def context_warm(*, workspace_id: int, params: ContextParams) -> None:
    """Assemble without a deadline and cache the result under the original request's key."""
    workspace = Workspace.objects.get(pk=workspace_id)
    key = _cache_key(workspace, params)
    outcome = _assemble(workspace=workspace, params=replace(params, timeout_ms=0))
    body = _respond(workspace, params, outcome, None)
    if settings.ASSEMBLY_CACHE_SECONDS and not outcome.partial:
        scope = scope_of(params=params, resolved=outcome.resolved)
        cache.set_value(
            key, {"body": body, "layer": outcome.resolved.layer.pk, "scope": scope}, settings.ASSEMBLY_CACHE_SECONDS
        )


def _cache_key(workspace: Workspace, params: ContextParams) -> str:
    """Identical requests against unchanged content share a key (see apps/core/versions.py)."""
    request = json.dumps(asdict(params), sort_keys=True, default=str)
    version = content_version(workspace.pk)
    return "ctx:" + hashlib.sha256(f"{workspace.pk}\x00{version}\x00{request}".encode()).hexdigest()


def _respond_cached(
    workspace: Workspace, params: ContextParams, cached: dict[str, Any], api_key: ApiKey | None
) -> dict[str, Any]:
    """The stored answer, recorded as a cache hit (its trace is the original one's)."""
    started = time.perf_counter()
    body = cached["body"]
    ASSEMBLY_CACHE.labels(result="hit").inc()
    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    _record_create(
        workspace=workspace,
        layer_id=cached["layer"],
        api_key=api_key,
        request={"cached_from": body["trace_id"], "query": _stored_query(workspace, params.query)},
        model=body["model"],
        encoding=body["encoding"],
        tokens_used=body["total_tokens"],
        token_budget=body["token_budget"],
        items_included=len(body["chunks"]),
        candidates_considered=0,
        overflow_count=body["overflow"]["count"],
        truncated_count=body["truncated_count"],
        elapsed_ms=elapsed_ms,
        cache_hit=True,
        sampled=False,
        trace=[],
        **cached_record_fields(params=params, cached=cached),
    )
    ASSEMBLY_LATENCY.observe(elapsed_ms)
    return {**body, "cached": True, "partial": False, "elapsed_ms": elapsed_ms}


WHAT_IF_BUDGETS = (1000, 2000, 4000, 8000)
WARM_QUEUE_LIMIT = 8


def context_preview(*, workspace: Workspace, params: ContextParams, api_key: ApiKey | None = None) -> dict[str, Any]:
    """What `context_assemble` returns for `params`, plus the full trace and a what-if table.

    The what-if rows re-pack the same ranked candidates at other budgets: no second retrieval.
    """
    params = _redacted(workspace, params)
    outcome = _assemble(workspace=workspace, params=params)
    body = _respond(workspace, params, outcome, api_key)
    r = outcome.resolved
    rows = []
    for budget in WHAT_IF_BUDGETS:
        if outcome.result is None:
            rows.append({"token_budget": budget, "tokens_used": 0, "items_included": 0, "truncated_count": 0})
            continue
        alt = _pack(outcome.ranked, r, budget)
        rows.append(
            {
                "token_budget": budget,
                "tokens_used": alt.total_tokens,
                "items_included": len(alt.chunks),
                "truncated_count": alt.truncated_count,
            }
        )
    trace = [*(outcome.result.trace if outcome.result else ()), *outcome.extra_trace]
    return {**body, "trace": [entry.as_dict() for entry in trace], "what_if": rows}


def _pack(ranked: list[Scored], r: Resolved, budget: int) -> Assembled:
    return assemble(
        ranked,
        budget=budget,
        fmt=r.fmt,
        count=lambda text: tokenizer.count_tokens(text, r.tokenizer.encoding),
        zone=r.zone,
        resolution=r.resolution,
        limits={"package": r.package_limit},
        template=r.template,
    )


def _threads(tree: LayerTree, layer_ids: set[int]) -> dict[int, int]:
    """Each layer's conversation: its nearest multi-session ancestor (or itself), where it has one."""
    out: dict[int, int] = {}
    for layer_id in layer_ids:
        node: int | None = layer_id
        while node is not None and node in tree and tree[node][1] != LayerKind.MULTI_SESSION:
            node = tree[node][0]
        if node is not None and node in tree:
            out[layer_id] = node
    return out


def _gather_and_pack(
    workspace: Workspace,
    params: ContextParams,
    r: Resolved,
    tree: LayerTree,
    window_layers: tuple[int, ...],
    warnings: list[str],
    deadline: Deadline,
) -> tuple[list[Scored], Assembled | None, list[TraceEntry]]:
    if r.budget < 1 or r.zone == "emergency":
        return [], None, []
    query_vector, r.cache_hit = _query_vector(params, warnings, deadline)
    ancestors, own, descendants = layer_scope(tree=tree, layer_id=r.layer.pk)
    names = {k: v[2] for k, v in tree.items()}
    filters = ItemFilters(
        workspace_id=workspace.pk,
        layer_ids=(*own, *descendants, *ancestors),
        kinds=tuple(params.kinds),
        types=r.types,
        since=params.since,
        until=params.until,
        min_confidence=params.min_confidence,
        group_id=params.group_id,
    )
    found = retrieve(
        filters=filters,
        layer_names=names,
        query=params.query,
        query_vector=query_vector,
        limit=settings.RETRIEVAL_CANDIDATES,
        window_layer_ids=window_layers,
        window_size=r.resolution.title_distance + 1,
        deadline=deadline,
    )
    warnings.extend(found.warnings)
    candidates = found.candidates
    extra_trace: list[TraceEntry] = []
    if window_layers and params.conversation_id:  # messages outside the named conversation are filtered
        window = set(window_layers)
        kept = [c for c in candidates if c.kind != "message" or c.layer_id in window]
        extra_trace = [_filtered(c) for c in candidates if c.kind == "message" and c.layer_id not in window]
        candidates = kept
    if params.expand_related and deadline.expired():
        deadline.skip("related items")
    elif params.expand_related:
        seeds = {c.id: fused_relevance(c, r.weights) for c in candidates if c.vector_rank or c.keyword_rank}
        candidates += related_items(seeds=seeds, filters=filters, layer_names=names, depth=params.expand_related)
    if (not params.kinds or "summary" in params.kinds) and deadline.expired():
        deadline.skip("layer summaries")
    elif not params.kinds or "summary" in params.kinds:
        candidates += layer_summaries(
            workspace_id=workspace.pk, layer_ids=(*own, *ancestors), layer_names=names, user=params.user
        )
    # Candidate sources run even past the deadline: each is a few indexed queries, and known fixes for
    # a failing agent (FR-006) matter most exactly when it is failing; a slow first request must not drop them.
    hints, source_warnings = source_candidates(
        SourceRequest(
            workspace_id=workspace.pk,
            layer_id=r.layer.pk,
            layer_name=r.layer.name,
            query=params.query,
            error=params.error,
            agent_type=r.agent_type,
            group_id=params.group_id,
            window_layer_ids=window_layers,
            summary_distance=r.resolution.summary_distance,
        )
    )
    candidates, stood_in = apply_stand_ins(candidates + hints)  # communities replace far-away members
    extra_trace += [_filtered(c, reason="in_community") for c in stood_in]
    warnings.extend(source_warnings)
    wants_packages = tuple(params.kinds) == ("package",) or bool(r.agent_type) or bool(params.group_id)
    if wants_packages and not any(c.kind == "package" for c in candidates):
        warnings.append("No context packages found")
    context = RankContext(
        now=timezone.now(),
        weights=r.weights,
        group_id=params.group_id,
        agent_type=r.agent_type,
        resolution=r.resolution,
        threads=_threads(tree, {c.layer_id for c in candidates}),
    )
    ranked = rank(candidates, context=context, scorer=r.scorer)
    return ranked, _pack(ranked, r, r.budget), extra_trace


def _filtered(c: Any, reason: str = "filtered") -> TraceEntry:
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
    )


def _respond(workspace: Workspace, params: ContextParams, outcome: Outcome, api_key: ApiKey | None) -> dict[str, Any]:
    r, result, warnings = outcome.resolved, outcome.result, outcome.warnings
    considered = len(outcome.ranked) + len(outcome.extra_trace)
    extra_trace = outcome.extra_trace
    elapsed_ms = round((time.perf_counter() - outcome.started) * 1000, 2)
    context = result.context if result else ""
    total = result.total_tokens if result else 0
    budget = max(r.budget, 0)
    overflow = result.overflow_count if result else 0
    truncated = result.truncated_count if result else 0
    chunks = result.chunks if result else ()
    trace = [*(result.trace if result else ()), *extra_trace]
    sampled = random.random() < settings.TRACE_SAMPLE_RATE
    record = _record_create(
        workspace=workspace,
        layer=r.layer,
        api_key=api_key,
        request={
            "layer": r.layer.pk,
            "query": _stored_query(workspace, params.query),
            "query_vector": params.query_vector is not None,
            "token_budget": budget,
            "model": r.model,
            "profile": params.profile,
            "format": r.fmt,
            "kinds": list(params.kinds),
            "types": list(r.types),
            "zone": r.zone,
            "ranking": r.scorer_name,
            "agent_type": r.agent_type,
            "group_id": params.group_id,
            "conversation_id": params.conversation_id,
            "expand_related": params.expand_related,
            "template": r.template.name if r.template else None,
        },
        model=r.model,
        encoding=r.tokenizer.encoding,
        tokens_used=total,
        token_budget=budget,
        items_included=len(chunks),
        candidates_considered=considered,
        overflow_count=overflow,
        truncated_count=truncated,
        elapsed_ms=elapsed_ms,
        cache_hit=r.cache_hit,
        sampled=sampled,
        trace=[entry.as_dict() for entry in trace] if sampled else [],
        **record_fields(params=params, resolved=r, chunks=chunks),
    )
    ASSEMBLY_LATENCY.observe(elapsed_ms)
    ASSEMBLY_TOKENS.observe(total)
    ASSEMBLY_LAYERS.observe(len({c.layer for c in chunks}))
    return {
        "context": context,
        "chunks": [
            {
                "id": c.id,
                "source": c.source,
                "external_id": c.external_id,
                "kind": c.kind,
                "type": c.type,
                "layer": c.layer,
                "layer_name": c.layer_name,
                "text": c.text,
                "depth": c.depth,
                "tokens": c.tokens,
                "score": round(c.score, 6),
                "truncated": c.truncated,
                "pinned": c.pinned,
                "created_at": c.created_at.isoformat(),
                "confidence": c.confidence,
            }
            for c in chunks
        ],
        "total_tokens": total,
        "token_budget": budget,
        "truncated_count": truncated,
        "overflow": {"count": overflow, "message": f"+{overflow} more available" if overflow else ""},
        "zone": r.zone,
        "warnings": warnings,
        "trace_id": str(record.trace_id),
        "elapsed_ms": elapsed_ms,
        "model": r.model,
        "encoding": r.tokenizer.encoding,
        "tokens_estimated": r.tokenizer.estimated,
        "format": r.fmt,
    }
