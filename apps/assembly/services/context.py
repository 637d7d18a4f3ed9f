"""`context_assemble`: the context for one agent turn, from the cache or freshly assembled, and recorded.

This is the hot path. It loads no model (the query embedder is process-wide), runs a handful of
queries whatever the workspace size, and never waits on an LLM. Anything that fails below the
request's own validation degrades (keyword only, no hints) and says so in `warnings`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace

from django.db import DatabaseError
from opentelemetry.trace import Span

from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams, params_to_json
from apps.assembly.results import ContextResult
from apps.assembly.scope import scope_of
from apps.assembly.services.assembling import Outcome, assemble_outcome
from apps.assembly.services.cache import CachedContext, cache_key, cached_get, cached_put
from apps.assembly.services.cancel import assemble_or_cancel
from apps.assembly.services.record import record_assembled, record_cache_hit
from apps.assembly.spans import assembly_annotate, assembly_started
from apps.conversations.access import note_served
from apps.core import background, fair_share, telemetry
from apps.core.db_health import classify
from apps.core.versions import pinned_reads, version_unread
from apps.metrics.registry import ASSEMBLY_CACHE
from apps.workspaces.models import ApiKey, Workspace

VERSION_UNREAD = (
    "the workspace's content version could not be read in time (the database is overloaded or a table is "
    "locked): this context was assembled without the cache and is not cached"
)
ALLOW_UNREAD = (
    "the workspace's redaction allow-list could not be read in time: the agent's error, group and agent type "
    "were redacted without it, and this context is not cached"
)
# Deadline warm-ups are dropped when this many background tasks already wait (overload).
WARM_QUEUE_LIMIT = 8


@pinned_reads  # the cache key, the layer snapshot and the hint source share one read of the version
def context_assemble(
    *,
    workspace: Workspace,
    params: ContextParams,
    api_key: ApiKey | None = None,
    started: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    origin: str = RecordOrigin.AGENT,
) -> ContextResult:
    """Assemble the context for `params` within `workspace`.

    `started` (time.perf_counter) is when the request arrived; the deadline counts from it.
    `cancelled` (e.g. a threading.Event's `is_set`) is asked at every stage boundary: once true, the
    assembly stops there and raises AssemblyCancelled, with nothing recorded, cached or warmed
    (services/cancel.py). A cache hit answers at once, without asking.
    Invariant: `total_tokens` is the exact token count of `context` in the model's tokenizer and
    never exceeds `token_budget`.
    """
    if not telemetry.tracing():
        return _assemble(workspace, params, api_key, started, cancelled, span=None, origin=origin)
    name, attributes = assembly_started(workspace=workspace, params=params, origin=origin)
    with telemetry.operation(name, attributes) as span:
        return _assemble(workspace, params, api_key, started, cancelled, span=span, origin=origin)


def _assemble(
    workspace: Workspace,
    params: ContextParams,
    api_key: ApiKey | None,
    started: float | None,
    cancelled: Callable[[], bool] | None,
    span: Span | None,
    origin: str = RecordOrigin.AGENT,
) -> ContextResult:
    started = time.perf_counter() if started is None else started
    params, strict = _redacted(workspace, params)
    key = cache_key(workspace_id=workspace.pk, params=params)
    uncached = version_unread(workspace.pk) or strict  # no cache without the version: assembled, not cached
    cached = None if uncached else cached_get(key)
    if cached is not None:
        ASSEMBLY_CACHE.labels(result="hit").inc()
        elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
        result = replace(cached.result, cached=True, partial=False, elapsed_ms=elapsed_ms)
        record_cache_hit(
            workspace=workspace, params=params, cached=cached, elapsed_ms=elapsed_ms, api_key=api_key, origin=origin
        )
        _bookkeeping(workspace, cached.layer_id, params.agent_type, params.group_id, result)
        if span is not None:
            assembly_annotate(span, workspace=workspace, params=params, result=result, layer_id=cached.layer_id)
        return result
    ASSEMBLY_CACHE.labels(result="miss").inc()
    outcome = assemble_or_cancel(workspace=workspace, params=params, started=started, cancelled=cancelled)
    fair_share.checkpoint()  # the caller may hold the slot on (the API's view): another stage boundary
    result = result_of(outcome)
    if uncached:
        notes = ((VERSION_UNREAD,) if version_unread(workspace.pk) else ()) + ((ALLOW_UNREAD,) if strict else ())
        result = replace(result, warnings=(*result.warnings, *notes))
    record_assembled(workspace=workspace, params=params, outcome=outcome, result=result, api_key=api_key, origin=origin)
    fair_share.checkpoint()
    _bookkeeping(workspace, outcome.resolved.layer.pk, outcome.resolved.agent_type, params.group_id, result)
    if span is not None:
        annotated(span, workspace=workspace, params=params, outcome=outcome, result=result)
    if outcome.partial and 0 <= background.queue_depth() < WARM_QUEUE_LIMIT:
        # Finish in the background; the full context then answers from the cache. Under overload
        # (a long queue) the warm-up is dropped rather than doubling the database's work.
        from apps.assembly.tasks import warm_context

        background.enqueue(warm_context, workspace.pk, params_to_json(params), telemetry.carried())
    elif not uncached:
        cached_put(
            key, CachedContext(result, outcome.resolved.layer.pk, scope_of(params=params, resolved=outcome.resolved))
        )
    return result


def context_warm(*, workspace_id: int, params: ContextParams, trace: Mapping[str, str] | None = None) -> None:
    """Assemble without a deadline and cache the result under the original request's key. `trace`:
    the request's trace context (telemetry.carried()); the warm-up's span is a child of its span."""
    workspace = Workspace.objects.get(pk=workspace_id)
    if not telemetry.tracing():
        _warm(workspace, params, span=None)
        return
    with telemetry.continued(trace or {}):
        name, attributes = assembly_started(workspace=workspace, params=params, run="warm_up")
        with telemetry.operation(name, attributes) as span:
            _warm(workspace, params, span=span)


def _warm(workspace: Workspace, params: ContextParams, span: Span | None) -> None:
    key = cache_key(workspace_id=workspace.pk, params=params)
    outcome = assemble_outcome(workspace=workspace, params=replace(params, timeout_ms=0))
    result = result_of(outcome)
    record_assembled(workspace=workspace, params=params, outcome=outcome, result=result, api_key=None)
    if span is not None:
        annotated(span, workspace=workspace, params=params, outcome=outcome, result=result)
    cached_put(
        key, CachedContext(result, outcome.resolved.layer.pk, scope_of(params=params, resolved=outcome.resolved))
    )


def annotated(
    span: Span, *, workspace: Workspace, params: ContextParams, outcome: Outcome, result: ContextResult
) -> None:
    """An assembly's figures and best-ranked decisions on its span."""
    decisions = [*(outcome.result.trace if outcome.result else ()), *outcome.extra_trace]
    assembly_annotate(
        span,
        workspace=workspace,
        params=params,
        result=result,
        layer_id=outcome.resolved.layer.pk,
        decisions=decisions,
        candidates=len(outcome.ranked),
    )


def result_of(outcome: Outcome) -> ContextResult:
    """The typed answer of an assembly; its trace id is the one its record will carry."""
    r, result = outcome.resolved, outcome.result
    return ContextResult(
        context=result.context if result else "",
        chunks=result.chunks if result else (),
        total_tokens=result.total_tokens if result else 0,
        token_budget=max(r.budget, 0),
        truncated_count=result.truncated_count if result else 0,
        overflow_count=result.overflow_count if result else 0,
        zone=r.zone,
        warnings=tuple(outcome.warnings),
        trace_id=str(uuid.uuid4()),
        elapsed_ms=round((time.perf_counter() - outcome.started) * 1000, 2),
        model=r.model,
        encoding=r.tokenizer.encoding,
        tokens_estimated=r.tokenizer.estimated,
        format=r.fmt,
        cached=False,
        partial=outcome.partial,
    )


def redacted(workspace: Workspace, params: ContextParams) -> ContextParams:
    """The request with its `error`, `group_id` and `agent_type` redacted, before they reach the cache
    key, records, injections, logs or traces (attempts store the same fields redacted the same way,
    so they still match)."""
    return _redacted(workspace, params)[0]


def _redacted(workspace: Workspace, params: ContextParams) -> tuple[ContextParams, bool]:
    """`redacted`, and whether the workspace's allow-list could not be read in time: then the fields
    are redacted without it (more is redacted, never less) rather than the request failing."""
    if not (params.error or params.group_id or params.agent_type):
        return params, False
    from apps.redaction.redactor import NO_ALLOW, Allow
    from apps.redaction.services import label_redact, text_redact

    def with_allow(allow: Allow | None) -> ContextParams:
        return replace(
            params,
            error=text_redact(workspace_id=workspace.pk, text=params.error, allow=allow).text if params.error else "",
            group_id=label_redact(workspace_id=workspace.pk, text=params.group_id, max_length=200, allow=allow),
            agent_type=label_redact(workspace_id=workspace.pk, text=params.agent_type, max_length=100, allow=allow),
        )

    try:
        return with_allow(None), False
    except DatabaseError as exc:
        if classify(exc) != "timeout":
            raise
        logging.getLogger(__name__).warning("workspace %s: allow-list not read in time (%s)", workspace.pk, exc)
        return with_allow(NO_ALLOW), True


def _bookkeeping(workspace: Workspace, layer_id: int, agent_type: str, group_id: str, result: ContextResult) -> None:
    """Served items count as accessed (buffered, one batched UPDATE in the background), and
    the known-fix hints served are recorded so a later failure can lower their confidence."""
    note_served(c.id for c in result.chunks if c.source == "item")
    hint_ids = [c.id for c in result.chunks if c.source == "error_hint"]
    if not hint_ids:
        return
    from apps.error_patterns.services import hints_injected

    try:
        hints_injected(
            workspace_id=workspace.pk, layer_id=layer_id, agent_type=agent_type, group_id=group_id, pattern_ids=hint_ids
        )
    except Exception:  # bookkeeping must never fail the request
        logging.getLogger(__name__).exception("recording injected hints failed")
