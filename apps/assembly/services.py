"""Context assembly: resolve the request, gather candidates, call the engine, store the trace.

This is the hot path. It loads no model (the query embedder is process-wide), runs a handful
of queries whatever the workspace size, and never waits on an LLM.
"""

from __future__ import annotations

import random
import time
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.assembly.engine import RankWeights, assemble, rank
from apps.assembly.engine.format import FORMATS
from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.retrieval import retrieve
from apps.core import embeddings, tokenizer
from apps.core.errors import InvalidInput
from apps.layers.selectors import layer_get, layer_get_by_external_id, layer_scope, layer_tree
from apps.layers.vectors import vector_available
from apps.metrics.registry import ASSEMBLY_LATENCY, ASSEMBLY_TOKENS
from apps.profiles.models import AgentProfile
from apps.workspaces.models import ApiKey, Workspace


def _resolve_budget(params: ContextParams, profile: AgentProfile | None) -> int:
    budget = params.token_budget or (profile.token_budget if profile else None) or settings.DEFAULT_TOKEN_BUDGET
    if not 1 <= budget <= settings.MAX_TOKEN_BUDGET:
        raise InvalidInput(
            f"token_budget must be between 1 and {settings.MAX_TOKEN_BUDGET}", code="invalid_token_budget"
        )
    return budget


def _record_create(**fields: Any) -> AssemblyRecord:
    """Store the assembly record without waiting for the WAL flush: losing the last few traces
    in a crash is acceptable, adding an fsync to every request is not."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        return AssemblyRecord.objects.create(**fields)


def context_assemble(*, workspace: Workspace, params: ContextParams, api_key: ApiKey | None = None) -> dict[str, Any]:
    """Assemble the context for `params` within `workspace`; returns the API response body.

    Invariant: `total_tokens` is the exact token count of `context` in the model's tokenizer and
    never exceeds `token_budget`.
    """
    started = time.perf_counter()
    warnings: list[str] = []
    if params.layer_id is not None:
        layer = layer_get(workspace=workspace, layer_id=params.layer_id)
    elif params.layer_external_id:
        layer = layer_get_by_external_id(workspace=workspace, external_id=params.layer_external_id)
    else:
        raise InvalidInput("give `layer` or `layer_external_id`", code="missing_layer")
    if not params.query.strip() and params.query_vector is None:
        raise InvalidInput("give `query` or `query_vector`", code="missing_query")

    profile = None
    if params.profile:
        profile = AgentProfile.objects.filter(workspace=workspace, name=params.profile).first()
        if profile is None:
            warnings.append(f"unknown profile {params.profile!r}; using the defaults")
    budget = _resolve_budget(params, profile)
    model = params.model or (profile.model if profile and profile.model else None) or settings.DEFAULT_MODEL
    fmt = params.format or (profile.preferred_format if profile else None) or "markdown"
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", code="invalid_format")
    kinds = list(params.kinds)
    types = list(params.types) or (list(profile.type_filters) if profile and profile.type_filters else [])
    info = tokenizer.encoding_for_model(model)
    if info.estimated:
        warnings.append(f"no tokenizer is known for model {model!r}; counts use {info.encoding} and are estimated")

    cache_hit = False
    query_vector = None
    if params.query_vector is not None:
        query_vector = embeddings.validate_query_vector(list(params.query_vector))
    elif not vector_available():
        warnings.append("vector search is unavailable on this database; results come from keyword search only")
    else:
        try:
            query_vector, cache_hit = embeddings.embed_query(params.query)
        except embeddings.EmbeddingError as exc:  # degrade to keyword search, never fail the request
            query_vector = None
            warnings.append(f"query embedding failed ({exc.message}); results come from keyword search only")

    tree = layer_tree(workspace_id=workspace.pk)
    ancestors, own, descendants = layer_scope(tree=tree, layer_id=layer.pk)
    scope = [*own, *descendants, *ancestors]
    limit = (profile.retrieval_limit if profile and profile.retrieval_limit else None) or settings.RETRIEVAL_CANDIDATES
    found = retrieve(
        workspace_id=workspace.pk,
        layer_ids=scope,
        layer_names={k: v[2] for k, v in tree.items()},
        query=params.query,
        query_vector=query_vector,
        limit=limit,
        kinds=kinds,
        types=types,
        since=params.since,
        until=params.until,
    )
    warnings.extend(found.warnings)
    weights = RankWeights(recency_half_life_days=settings.RECENCY_HALF_LIFE_DAYS)
    ranked = rank(found.candidates, weights=weights, now=timezone.now())
    result = assemble(ranked, budget=budget, fmt=fmt, count=lambda text: tokenizer.count_tokens(text, info.encoding))
    if not result.chunks:
        warnings.append("no content matched this request" if not ranked else "nothing fitted the token budget")
    overflow_message = f"+{result.overflow_count} more available" if result.overflow_count else ""
    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)

    sampled = random.random() < settings.TRACE_SAMPLE_RATE
    request_record = {
        "layer": layer.pk,
        "query": params.query,
        "query_vector": params.query_vector is not None,
        "token_budget": budget,
        "model": model,
        "profile": params.profile,
        "format": fmt,
        "kinds": kinds,
        "types": types,
    }
    record = _record_create(
        workspace=workspace,
        layer=layer,
        api_key=api_key,
        request=request_record,
        model=model,
        encoding=info.encoding,
        tokens_used=result.total_tokens,
        token_budget=budget,
        items_included=len(result.chunks),
        candidates_considered=len(ranked),
        overflow_count=result.overflow_count,
        truncated_count=result.truncated_count,
        elapsed_ms=elapsed_ms,
        cache_hit=cache_hit,
        sampled=sampled,
        trace=[entry.as_dict() for entry in result.trace] if sampled else [],
    )
    ASSEMBLY_LATENCY.observe(elapsed_ms)
    ASSEMBLY_TOKENS.observe(result.total_tokens)
    return {
        "context": result.context,
        "chunks": [
            {
                "id": c.id,
                "external_id": c.external_id,
                "kind": c.kind,
                "type": c.type,
                "layer": c.layer,
                "layer_name": c.layer_name,
                "text": c.text,
                "tokens": c.tokens,
                "score": round(c.score, 6),
                "truncated": c.truncated,
            }
            for c in result.chunks
        ],
        "total_tokens": result.total_tokens,
        "token_budget": budget,
        "truncated_count": result.truncated_count,
        "overflow": {"count": result.overflow_count, "message": overflow_message},
        "warnings": warnings,
        "trace_id": str(record.trace_id),
        "elapsed_ms": elapsed_ms,
        "model": model,
        "encoding": info.encoding,
        "tokens_estimated": info.estimated,
        "format": fmt,
    }
