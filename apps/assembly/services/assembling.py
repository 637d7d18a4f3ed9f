"""Assembling one context: resolve the request, gather candidates, rank and pack within the deadline.

Nothing here writes: the record, the cache and the bookkeeping are the callers' (see context.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

import numpy as np
from django.conf import settings
from django.utils import timezone

from apps.assembly.deadline import Deadline
from apps.assembly.degraded import skipped_candidates
from apps.assembly.errors import CONVERSATION_NOT_FOUND
from apps.assembly.params import ContextParams
from apps.assembly.resolve import Resolved, resolve
from apps.assembly.sources import GatherRequest, left_out
from apps.assembly.sources.pipeline import gather
from apps.assembly.timings import StageTimes
from apps.core import embeddings, tokenizer
from apps.core.db_health import classify
from apps.core.errors import InvalidInput, NotFound
from apps.core.field_errors import INVALID_EXPAND_RELATED
from apps.core.isolation import isolated
from apps.core.tokenizer.estimates import scaled
from apps.engine import Assembled, Candidate, RankContext, Scored, TraceEntry, assemble, rank
from apps.engine.dates import query_period
from apps.engine.floor import HitFloor
from apps.engine.types import Reason
from apps.layers.embedding_space import reembedding_note
from apps.layers.errors import ITEM_NOT_FOUND
from apps.layers.filters import ItemFilters
from apps.layers.models import Layer, LayerKind
from apps.layers.selectors import LayerTree, item_get
from apps.layers.snapshot import LayerSnapshot, layer_snapshot
from apps.layers.vectors import vector_available
from apps.profiles.services import ProfileInput
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Outcome:
    """One assembly before it is recorded: the resolved request, the ranked candidates and the result.

    `warnings` are the answer's, written once by `assemble_outcome` in the order the stages ran
    (clients compare them): resolving's, gathering's, packing's, the deadline's, then the result's."""

    resolved: Resolved
    ranked: list[Scored]
    result: Assembled | None  # None: no budget left in this zone, nothing was gathered
    extra_trace: list[TraceEntry]
    warnings: tuple[str, ...]
    started: float
    timings: StageTimes
    embedding_cache_hit: bool | None = None  # None: no query embedding was computed
    partial: bool = False  # a stage was skipped at the deadline


@dataclass(frozen=True)
class _Packed:
    """What gathering, ranking and packing produced, with their warnings in the order they arose."""

    ranked: list[Scored] = field(default_factory=list)
    result: Assembled | None = None  # None: no budget left in this zone, nothing was gathered
    extra_trace: list[TraceEntry] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    embedding_cache_hit: bool | None = None


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
            raise InvalidInput(f"expand_related must be 0..{settings.MAX_RELATED_DEPTH}", code=INVALID_EXPAND_RELATED)
        window_layers = _conversation(workspace, layers, params, r.layer)
    timeout = settings.ASSEMBLY_TIMEOUT_MS if params.timeout_ms is None else params.timeout_ms
    deadline = Deadline(limit_ms=timeout or None, started=started, cancelled=cancelled)
    packed = _gather_and_pack(workspace, params, r, layers, window_layers, deadline, timings)
    return Outcome(
        resolved=r,
        ranked=packed.ranked,
        result=packed.result,
        extra_trace=packed.extra_trace,
        warnings=(
            *r.warnings,
            *packed.warnings,
            *_deadline_warnings(deadline, timeout, started),
            *_result_warnings(packed.ranked, packed.result),
        ),
        started=started,
        timings=timings,
        embedding_cache_hit=packed.embedding_cache_hit,
        partial=deadline.partial,
    )


def _deadline_warnings(deadline: Deadline, timeout: int, started: float) -> tuple[str, ...]:
    """What a context cut at its deadline lacks, and that the full one follows through the cache."""
    if not deadline.partial:
        return ()
    elapsed = round((time.perf_counter() - started) * 1000)
    cut = (
        f"assembly passed its {timeout} ms deadline ({elapsed} ms since the request arrived)"
        if timeout and elapsed >= timeout
        else f"part of the assembly did not finish in time, a query timed out ({elapsed} ms since the request arrived)"
    )
    return (
        f"{cut}: this context lacks {', '.join(deadline.skipped)}; the full context is being assembled in the "
        "background and will be served from the cache",
    )


def _result_warnings(ranked: list[Scored], result: Assembled | None) -> tuple[str, ...]:
    """What the packed context itself says: stale summaries in it, or why it is empty."""
    warnings: tuple[str, ...] = ()
    stale = {(s.candidate.source, s.candidate.id) for s in ranked if s.candidate.stale}
    if result is not None and stale:
        names = sorted({c.layer_name for c in result.chunks if (c.source, c.id) in stale})
        if names:
            warnings += (
                f"stale summaries served for {', '.join(names)}: their last regeneration failed, "
                "they predate the latest changes",
            )
    if result is None or not result.chunks:
        why = (
            "no budget is left in this zone"
            if result is None
            else "nothing fitted the token budget"
            if ranked
            else "no content matched this request"
        )
        warnings += (f"the context is empty: {why}",)
    return warnings


@dataclass(frozen=True)
class _QueryVector:
    """The query vector (None: keyword search only) or its embedding still running, and the
    warnings said before any search (no pgvector, a clipped query)."""

    vector: np.ndarray | None | _PendingVector
    warnings: tuple[str, ...] = ()
    pending: _PendingVector | None = None  # the embedding in a thread, whether done or not


def _query_vector(params: ContextParams, deadline: Deadline, timings: StageTimes) -> _QueryVector:
    """The query vector, or the query embedding started in a thread, which the hybrid search waits
    for after its keyword search (apps/layers/hybrid_search.py)."""
    if params.query_vector is not None:
        return _QueryVector(embeddings.validate_query_vector(list(params.query_vector)))
    if not vector_available():
        return _QueryVector(
            None, ("vector search is unavailable on this database; results come from keyword search only",)
        )
    warnings = (embeddings.QUERY_CLIPPED,) if embeddings.query_clipped(params.query) else ()
    if deadline.expired():
        deadline.skip("query embedding")
        return _QueryVector(None, warnings)
    left = deadline.remaining_ms()
    pending = _PendingVector(
        embeddings.embed_query_soon(params.query, timeout=None if left is None else left / 1000), timings, deadline
    )
    # A cached vector: the searches keep their order.
    return _QueryVector(pending() if pending.future.done() else pending, warnings, pending)


@dataclass
class _PendingVector:
    """A query embedding running in a thread; calling it waits for the vector, at most until the deadline.

    An embedder failure degrades to keyword search with a warning (in `warnings` once called); a
    wait past the deadline names the query embedding as skipped (a partial answer, finished in the
    background, where the vector computed meanwhile is in the cache)."""

    future: Future[tuple[np.ndarray, bool]]
    timings: StageTimes
    deadline: Deadline
    warnings: tuple[str, ...] = ()
    cache_hit: bool | None = None  # None: no vector came back

    def __call__(self) -> np.ndarray | None:
        left = self.deadline.remaining_ms()
        with self.timings.stage("embedding"):
            try:
                vector, self.cache_hit = self.future.result(timeout=None if left is None else max(left, 0) / 1000)
            except TimeoutError:
                self.deadline.skip("query embedding")
                return None
            except embeddings.EmbeddingError as exc:  # degrade to keyword search, never fail the request
                self.warnings = (f"query embedding failed ({exc.message}); results come from keyword search only",)
                return None
        return vector


def _conversation(workspace: Workspace, layers: LayerSnapshot, params: ContextParams, layer: Layer) -> tuple[int, ...]:
    """The layers whose messages form the conversation window (distances count from its newest turn)."""
    if params.message_id is not None:  # compile from a message: its conversation, unless one is named
        message = item_get(workspace=workspace, item_id=params.message_id)
        if message.kind != "message":
            raise NotFound(f"message {params.message_id} not found", code=ITEM_NOT_FOUND)
        if not params.conversation_id and layer.kind != LayerKind.SESSION:
            return (message.layer_id,)
    if params.conversation_id:
        found = layers.by_external_id(params.conversation_id, kinds=(LayerKind.SESSION, LayerKind.MULTI_SESSION))
        if not found:
            raise NotFound(f"conversation {params.conversation_id!r} not found", code=CONVERSATION_NOT_FOUND)
        _, own, descendants = layers.scope(found[0].pk)
        return (*own, *descendants)
    if layer.kind == LayerKind.SESSION:
        return (layer.pk,)
    return ()


def _counter(r: Resolved) -> Callable[[str], int]:
    """Exact counts in the model's encoding; an estimated model's scaled by its calibrated ratio."""
    encoding, estimate = r.tokenizer.encoding, r.estimate
    if estimate.ratio == 1.0:
        return lambda text: tokenizer.count_tokens(text, encoding)
    return lambda text: scaled(tokenizer.count_tokens(text, encoding), estimate)


# However late a request is, packing gets this long (a normal one takes a few ms): a late request
# still answers with what was gathered, and only a pathological one (a huge template) is cut.
PACK_FLOOR_MS = 100


def pack(ranked: list[Scored], r: Resolved, budget: int, deadline: Deadline | None = None) -> Assembled:
    """The engine's packing of `ranked` at `budget`, counted in the request's tokenizer; with a
    deadline, the candidates not reached by then are left out (named in `deadline.skipped`)."""
    left = None if deadline is None else deadline.remaining_ms()
    end = None if left is None else time.perf_counter() + max(left, PACK_FLOOR_MS) / 1000
    result = assemble(
        ranked,
        budget=budget,
        fmt=r.fmt,
        count=_counter(r),
        zone=r.zone,
        resolution=r.resolution,
        limits={"package": r.package_limit},
        template=r.template,
        stop=None if end is None else lambda: time.perf_counter() > end,
    )
    if deadline is not None and end is not None and time.perf_counter() > end:  # it may have stopped
        late = sum(1 for e in result.trace if e.reason == "deadline")
        if late:
            deadline.skip(f"the packing of {late} candidates")
    return result


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
    layers: LayerSnapshot,
    window_layers: tuple[int, ...],
    deadline: Deadline,
    timings: StageTimes,
) -> _Packed:
    if r.budget < 1 or r.zone == "emergency":
        return _Packed()
    deadline.check("embedding")
    with timings.stage("embedding"):
        query = _query_vector(params, deadline, timings)
    note = _reembedding_note(workspace, deadline) if query.vector is not None else None
    deadline.check("candidates")
    gathering, waited = time.perf_counter(), timings.ms.get("embedding", 0.0)
    gathered = _candidates(
        _gather_request(
            workspace=workspace,
            params=params,
            resolved=r,
            layers=layers,
            window_layers=window_layers,
            deadline=deadline,
            timings=timings,
            query_vector=query.vector,
        )
    )
    searched = sum(timings.ms.get(stage, 0.0) for stage in ("vector_search", "keyword_search", "embedding")) - waited
    timings.add("candidates", (time.perf_counter() - gathering) * 1000 - searched)
    candidates, extra_trace = gathered.candidates, list(gathered.extra_trace)
    context = RankContext(
        now=timezone.now(),
        weights=r.weights,
        group_id=params.group_id,
        agent_type=r.agent_type,
        resolution=r.resolution,
        threads=_threads(layers.tree, {c.layer_id for c in candidates}),
        period=query_period(params.query),
        budget=r.budget,
    )
    deadline.check("ranking")
    unranked: list[Candidate] = []
    with timings.stage("ranking"):
        ranked = rank(candidates, context=context, scorer=r.scorer, failed=unranked)
        # A summary no closer to the query than its best hits does not pay its tokens (engine/floor.py).
        floor = gathered.floor.raised(candidates)
        kept = [s for s in ranked if not floor.below(s.candidate)]
        extra_trace += [_below_floor(s) for s in ranked if floor.below(s.candidate)]
    deadline.check("packing")
    with timings.stage("packing"):
        result = pack(kept, r, r.budget, deadline)
    extra_trace += [left_out(c, reason=Reason.FAILED) for c in unranked]
    failed = [f"{c.source} {c.id}" for c in unranked]
    failed += [f"{source} {id_}" for source, id_ in result.failed]
    pending = query.pending
    return _Packed(
        ranked=kept,
        result=result,
        extra_trace=extra_trace,
        warnings=(
            *query.warnings,
            *((note,) if note else ()),
            *(pending.warnings if pending else ()),  # said while the hybrid search waited for the vector
            *gathered.warnings,
            *((skipped_candidates(failed),) if failed else ()),
        ),
        embedding_cache_hit=pending.cache_hit if pending else None,
    )


def _reembedding_note(workspace: Workspace, deadline: Deadline) -> str | None:
    """The warning that a model change is still being re-embedded, or None; a check that fails leaves
    it out, and one that did not finish in time (a statement or lock timeout) is named skipped."""
    note, error = isolated(lambda: reembedding_note(workspace_id=workspace.pk), what="the re-embedding check")
    if error is not None and classify(error) == "timeout":
        deadline.skip("the re-embedding check")
    return note


@dataclass(frozen=True)
class _Gathered:
    """The candidates of every source that passed the filters, those left out (with why), the
    query's best hits, and the gathering's warnings in the order the sources ran."""

    candidates: list[Candidate]
    extra_trace: list[TraceEntry]
    floor: HitFloor
    warnings: tuple[str, ...]


def _candidates(request: GatherRequest) -> _Gathered:
    """The gather pipeline's candidates (apps/assembly/sources/pipeline.py), and that no package came
    when the request asks for packages.

    A community stands in for its far-away members only once it is in the context: the packer
    leaves out a member ranked after it ("in_community"), never one whose community was left out."""
    gathered = gather(request)
    candidates = list(gathered.candidates)
    return _Gathered(
        candidates=candidates,
        extra_trace=list(gathered.left_out),
        floor=gathered.searched.floor,
        warnings=(*gathered.warnings, *_package_warnings(request.params, request.resolved, candidates)),
    )


def _gather_request(
    *,
    workspace: Workspace,
    params: ContextParams,
    resolved: Resolved,
    layers: LayerSnapshot,
    window_layers: tuple[int, ...],
    deadline: Deadline,
    timings: StageTimes,
    query_vector: np.ndarray | None | Callable[[], np.ndarray | None],
) -> GatherRequest:
    """What every source reads: the request, its layers in scope and the item filters over them."""
    tree = layers.tree
    ancestors, own, descendants = layers.scope(resolved.layer.pk)
    filters = ItemFilters(
        workspace_id=workspace.pk,
        layer_ids=_searched_layers(tree, (*own, *descendants, *ancestors), window_layers, params),
        kinds=tuple(params.kinds),
        types=resolved.types,
        since=params.since,
        until=params.until,
        min_confidence=params.min_confidence,
    )  # no group_id: the group ranks packages (same-group match), it filters nothing
    return GatherRequest(
        workspace=workspace,
        params=params,
        resolved=resolved,
        tree=tree,
        layer_names=layers.names,
        ancestors=ancestors,
        own=own,
        descendants=descendants,
        filters=filters,
        window_layers=window_layers,
        deadline=deadline,
        timings=timings,
        query_vector=query_vector,
    )


def _package_warnings(params: ContextParams, r: Resolved, candidates: list[Candidate]) -> tuple[str, ...]:
    """That no context package came, when the request asks for packages (by kind, agent type or group)."""
    wants_packages = tuple(params.kinds) == ("package",) or bool(r.agent_type) or bool(params.group_id)
    if wants_packages and not any(c.kind == "package" for c in candidates):
        return ("No context packages found",)
    if params.group_id and not any(c.kind == "package" and c.group_id in ("", params.group_id) for c in candidates):
        return (f"No context packages found for group {params.group_id}",)
    return ()


def _searched_layers(
    tree: LayerTree, scope: tuple[int, ...], window_layers: tuple[int, ...], params: ContextParams
) -> tuple[int, ...]:
    """The layers whose items may be candidates: the request's scope, and with a `conversation_id`
    only that conversation's sessions: the other sessions' and conversations' items
    (turns and memories alike) are left out, the shared layers above them (project, company) kept."""
    if not params.conversation_id:
        return scope
    named = set(window_layers)
    for layer_id in window_layers:  # the conversation's own multi-session parent holds its shared items
        parent = tree[layer_id][0] if layer_id in tree else None
        while parent is not None and parent in tree:
            named.add(parent)
            parent = tree[parent][0]
    conversations = (LayerKind.SESSION, LayerKind.MULTI_SESSION)
    kept = tuple(i for i in scope if i in named or i not in tree or tree[i][1] not in conversations)
    return kept + tuple(i for i in window_layers if i not in set(kept))


def _below_floor(s: Scored) -> TraceEntry:
    """A ranked candidate left out under the similarity floor, with the score and parts it was ranked by."""
    return replace(left_out(s.candidate, reason=Reason.BELOW_FLOOR), score=s.score, parts=s.parts)
