"""Assembling one context: resolve the request, gather candidates, rank and pack within the deadline.

Nothing here writes: the record, the cache and the bookkeeping are the callers' (see context.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from apps.assembly.adjacency import neighbour_seed_rank
from apps.assembly.deadline import Deadline
from apps.assembly.engine import Assembled, Candidate, RankContext, Scored, TraceEntry, assemble, rank
from apps.assembly.engine.rank import fused_relevance
from apps.assembly.params import ContextParams
from apps.assembly.resolve import Resolved, resolve
from apps.assembly.retrieval import layer_summaries, related_items, retrieve, source_candidates
from apps.assembly.sources import SourceRequest, apply_stand_ins
from apps.assembly.timings import StageTimes
from apps.core import embeddings, tokenizer
from apps.core.errors import InvalidInput, NotFound
from apps.layers.filters import ItemFilters
from apps.layers.models import Layer, LayerKind
from apps.layers.selectors import LayerTree, layer_scope
from apps.layers.snapshot import LayerSnapshot, layer_snapshot
from apps.layers.vectors import vector_available
from apps.profiles.services import ProfileInput
from apps.workspaces.models import Workspace


@dataclass
class Outcome:
    """One assembly before it is recorded: the resolved request, the ranked candidates and the result."""

    resolved: Resolved
    ranked: list[Scored]
    result: Assembled | None  # None: no budget left in this zone, nothing was gathered
    extra_trace: list[TraceEntry]
    warnings: list[str]
    started: float
    timings: StageTimes
    embedding_cache_hit: bool | None = None  # None: no query embedding was computed
    partial: bool = False  # a stage was skipped at the deadline


def assemble_outcome(
    *,
    workspace: Workspace,
    params: ContextParams,
    started: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    profile_draft: ProfileInput | None = None,
) -> Outcome:
    """Resolve, gather, rank and pack; `started` (perf_counter) is when the request arrived: the
    deadline counts from it. Once `cancelled()` is true, the next stage boundary raises
    AssemblyCancelled (apps/assembly/deadline.py). `profile_draft`: unsaved profile settings
    instead of the stored ones."""
    started = time.perf_counter() if started is None else started
    timings = StageTimes()
    with timings.stage("resolve"):
        layers = layer_snapshot(workspace_id=workspace.pk)
        try:
            r = resolve(workspace=workspace, params=params, layers=layers, profile_draft=profile_draft)
        except NotFound:  # created since this process read the layers? (see apps/layers/snapshot.py)
            layers = layer_snapshot(workspace_id=workspace.pk, fresh=True)
            r = resolve(workspace=workspace, params=params, layers=layers, profile_draft=profile_draft)
        if params.expand_related and not 0 <= params.expand_related <= settings.MAX_RELATED_DEPTH:
            raise InvalidInput(f"expand_related must be 0..{settings.MAX_RELATED_DEPTH}", code="invalid_expand_related")
        tree = layers.tree
        window_layers = _conversation(layers, params, r.layer)
    warnings = r.warnings
    timeout = settings.ASSEMBLY_TIMEOUT_MS if params.timeout_ms is None else params.timeout_ms
    deadline = Deadline(limit_ms=timeout or None, started=started, cancelled=cancelled)
    outcome = Outcome(
        resolved=r, ranked=[], result=None, extra_trace=[], warnings=warnings, started=started, timings=timings
    )
    _gather_and_pack(outcome, workspace, params, tree, window_layers, deadline)
    outcome.partial = deadline.partial
    if deadline.partial:
        elapsed = round((time.perf_counter() - started) * 1000)
        warnings.append(
            f"assembly passed its {timeout} ms deadline ({elapsed} ms since the request arrived): this context "
            f"lacks {', '.join(deadline.skipped)}; the full context is being assembled in the background and "
            "will be served from the cache"
        )
    _result_warnings(outcome)
    return outcome


def _result_warnings(outcome: Outcome) -> None:
    ranked, result, warnings = outcome.ranked, outcome.result, outcome.warnings
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


def _query_vector(params: ContextParams, outcome: Outcome, deadline: Deadline) -> np.ndarray | None | _PendingVector:
    """The query vector (None: keyword search only), or the query embedding started in a thread,
    which the hybrid search waits for after its keyword search (apps/layers/hybrid_search.py)."""
    if params.query_vector is not None:
        return embeddings.validate_query_vector(list(params.query_vector))
    if not vector_available():
        outcome.warnings.append("vector search is unavailable on this database; results come from keyword search only")
        return None
    if deadline.expired():
        deadline.skip("query embedding")
        return None
    left = deadline.remaining_ms()
    pending = _PendingVector(
        embeddings.embed_query_soon(params.query, timeout=None if left is None else left / 1000), outcome, deadline
    )
    return pending() if pending.future.done() else pending  # a cached vector: the searches keep their order


@dataclass
class _PendingVector:
    """A query embedding running in a thread; calling it waits for the vector, at most until the deadline.

    An embedder failure degrades to keyword search with a warning; a wait past the deadline names
    the query embedding as skipped (a partial answer, finished in the background, where the vector
    computed meanwhile is in the cache)."""

    future: Future[tuple[np.ndarray, bool]]
    outcome: Outcome
    deadline: Deadline

    def __call__(self) -> np.ndarray | None:
        left = self.deadline.remaining_ms()
        with self.outcome.timings.stage("embedding"):
            try:
                vector, self.outcome.embedding_cache_hit = self.future.result(
                    timeout=None if left is None else max(left, 0) / 1000
                )
            except TimeoutError:
                self.deadline.skip("query embedding")
                return None
            except embeddings.EmbeddingError as exc:  # degrade to keyword search, never fail the request
                self.outcome.warnings.append(
                    f"query embedding failed ({exc.message}); results come from keyword search only"
                )
                return None
        return vector


def _conversation(layers: LayerSnapshot, params: ContextParams, layer: Layer) -> tuple[int, ...]:
    """The layers whose messages form the conversation window (seed 002 distances count from its newest turn)."""
    if params.conversation_id:
        found = layers.by_external_id(params.conversation_id, kinds=(LayerKind.SESSION, LayerKind.MULTI_SESSION))
        if not found:
            raise NotFound(f"conversation {params.conversation_id!r} not found", code="conversation_not_found")
        _, own, descendants = layer_scope(tree=layers.tree, layer_id=found[0].pk)
        return (*own, *descendants)
    if layer.kind == LayerKind.SESSION:
        return (layer.pk,)
    return ()


def pack(ranked: list[Scored], r: Resolved, budget: int) -> Assembled:
    """The engine's packing of `ranked` at `budget`, counted in the request's tokenizer."""
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
    outcome: Outcome,
    workspace: Workspace,
    params: ContextParams,
    tree: LayerTree,
    window_layers: tuple[int, ...],
    deadline: Deadline,
) -> None:
    r, warnings, timings = outcome.resolved, outcome.warnings, outcome.timings
    if r.budget < 1 or r.zone == "emergency":
        return
    deadline.check("embedding")
    with timings.stage("embedding"):
        query_vector = _query_vector(params, outcome, deadline)
    deadline.check("candidates")
    gathering, waited = time.perf_counter(), timings.ms.get("embedding", 0.0)
    candidates, extra_trace = _candidates(
        workspace, params, r, tree, window_layers, query_vector, warnings, deadline, timings
    )
    searched = sum(timings.ms.get(stage, 0.0) for stage in ("vector_search", "keyword_search", "embedding")) - waited
    timings.add("candidates", (time.perf_counter() - gathering) * 1000 - searched)
    context = RankContext(
        now=timezone.now(),
        weights=r.weights,
        group_id=params.group_id,
        agent_type=r.agent_type,
        resolution=r.resolution,
        threads=_threads(tree, {c.layer_id for c in candidates}),
    )
    deadline.check("ranking")
    with timings.stage("ranking"):
        outcome.ranked = rank(candidates, context=context, scorer=r.scorer)
    deadline.check("packing")
    with timings.stage("packing"):
        outcome.result = pack(outcome.ranked, r, r.budget)
    outcome.extra_trace = extra_trace


def _candidates(
    workspace: Workspace,
    params: ContextParams,
    r: Resolved,
    tree: LayerTree,
    window_layers: tuple[int, ...],
    query_vector: Any,
    warnings: list[str],
    deadline: Deadline,
    timings: StageTimes,
) -> tuple[list[Candidate], list[TraceEntry]]:
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
        timings=timings,
        neighbour_seeds=neighbour_seed_rank(r.budget),
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
    deadline.check("candidate sources")  # but not past a cancel
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
    return candidates, extra_trace


def _filtered(c: Candidate, reason: str = "filtered") -> TraceEntry:
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
        origin=c.origin,
    )
