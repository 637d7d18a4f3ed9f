"""Load the retrieval set into a fresh workspace, embed it, and measure evidence recall.

For every question and budget the engine is asked through `context_assemble` at the question's
conversation (its multi_session layer), exactly as an agent would ask, or at the root with every
conversation in scope (SCOPES); the recency window and the plain fused baseline (see baselines.py)
are measured on the same questions, budgets and turns. Only the engine's answer goes through the
product; the baselines are computed here so they stay fixed while the engine changes.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction

from apps.assembly.evaluation.baselines import bm25_ranking, cosine_ranking, pack_in_order, recency_window, rrf_fuse
from apps.assembly.evaluation.dataset import Conversation, Dataset
from apps.assembly.evaluation.recall import ChunkView, chunks_from_response, question_recall, turn_found
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import background, embeddings, tokenizer
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, ItemKind, Layer, LayerKind
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

DEFAULT_BUDGETS = (500, 1000, 2000, 4000)
# "conversation": ask at the question's multi_session layer (the default, as an agent in that
# conversation would). "workspace": ask at the company root, so every conversation is in scope and
# the other seven act as a haystack, closer to long-memory benchmarks; baselines see all turns too.
SCOPES = ("conversation", "workspace")
FUSED_CANDIDATES = 50
EMBED_TIMEOUT_SECONDS = 600.0


class EvalError(RuntimeError):
    """The evaluation could not run (for example, embeddings never finished)."""


@dataclass(frozen=True)
class LoadedConversation:
    """Where a conversation landed: its multi_session layer and, under it, one layer per session."""

    id: str
    layer_id: int
    session_layer_ids: tuple[int, ...]


@dataclass(frozen=True)
class Loaded:
    workspace: Workspace
    root_layer_id: int
    conversations: dict[str, LoadedConversation]
    load_seconds: float


@dataclass(frozen=True)
class QuestionResult:
    """One question at one budget: recall of the engine and of both baselines (None: no evidence)."""

    question_id: str
    type: str
    budget: int
    recall: float | None
    recency: float | None
    fused: float | None
    tokens: int  # exact count of the engine's context, recounted here
    missed: tuple[str, ...]  # evidence turns the engine's context did not contain


@dataclass(frozen=True)
class EvalRun:
    budgets: tuple[int, ...]
    scope: str
    results: tuple[QuestionResult, ...]
    conversations: int
    turns: int
    load_seconds: float
    run_seconds: float
    workspace_slug: str
    warnings: tuple[str, ...]


def _load_conversation(*, workspace: Workspace, root: Layer, conversation: Conversation) -> LoadedConversation:
    top = layer_create(
        workspace=workspace,
        kind=LayerKind.MULTI_SESSION,
        name=conversation.title,
        parent=root,
        external_id=conversation.id,
    )
    session_layer_ids = []
    parent: int | None = None  # each message answers the one before it, across sessions too
    for session in conversation.sessions:
        layer = layer_create(
            workspace=workspace,
            kind=LayerKind.SESSION,
            name=f"{conversation.title} · {session.started_at:%Y-%m-%d}",
            parent=top,
            external_id=session.id,
        )
        session_layer_ids.append(layer.pk)
        for turn in session.turns:
            data = ItemInput(
                kind=ItemKind.MESSAGE,
                role=turn.role,
                content=turn.text,
                external_id=turn.id,
                created_at=turn.created_at,
                parent=parent,
            )
            (item,) = items_create(layer=layer, items=[data])
            parent = item.pk
    return LoadedConversation(id=conversation.id, layer_id=top.pk, session_layer_ids=tuple(session_layer_ids))


def _embed_all(*, workspace_id: int) -> None:
    """Embed here and wait for any background worker that claimed rows first."""
    deadline = time.monotonic() + EMBED_TIMEOUT_SECONDS
    while True:
        items_embed_pending(workspace_id=workspace_id)
        if not Item.objects.filter(workspace_id=workspace_id, embedding__isnull=True).exists():
            return
        if time.monotonic() > deadline:
            raise EvalError("items were still waiting for embeddings after the timeout")
        background.wait_idle(5)
        time.sleep(0.2)


def eval_load(*, dataset: Dataset, slug: str | None = None) -> Loaded:
    """A fresh workspace with one multi_session layer per conversation, one session layer per
    session, every turn as a message item (external id = turn id), all embedded."""
    started = time.perf_counter()
    slug = slug or f"eval-retrieval-{int(time.time())}-{secrets.token_hex(3)}"
    with transaction.atomic():
        workspace, _ = workspace_create(slug=slug, name="Retrieval evaluation")
        root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
        loaded = {
            c.id: _load_conversation(workspace=workspace, root=root, conversation=c) for c in dataset.conversations
        }
    try:
        _embed_all(workspace_id=workspace.pk)
    except Exception:
        workspace.delete()
        raise
    return Loaded(
        workspace=workspace,
        root_layer_id=root.pk,
        conversations=loaded,
        load_seconds=time.perf_counter() - started,
    )


def _fused_order(*, query: str, texts: dict[str, str], vectors: dict[str, np.ndarray]) -> list[str]:
    """Turn ids by reciprocal-rank fusion of BM25 and (when the query embeds) cosine rankings."""
    keyword = bm25_ranking(query=query, docs=texts)[:FUSED_CANDIDATES]
    try:
        query_vector, _ = embeddings.embed_query(query)
    except embeddings.EmbeddingError:
        return keyword
    return rrf_fuse([cosine_ranking(query_vector=query_vector, vectors=vectors)[:FUSED_CANDIDATES], keyword])


def _plain_vectors(dataset: Dataset) -> dict[str, np.ndarray]:
    """Each turn's own passage embedding, for the fused baseline: the stored ones carry their
    layer's name (see apps/layers/embedder.py), which is the engine's, not the baseline's."""
    turns = [t for c in dataset.conversations for t in c.turns]
    try:
        vectors = embeddings.embed_passages([t.text for t in turns])
    except embeddings.EmbeddingError:
        return {}
    return {t.id: v for t, v in zip(turns, vectors, strict=True)}


def _missed(evidence: dict[str, str], chunks: list[ChunkView]) -> tuple[str, ...]:
    return tuple(t for t, text in evidence.items() if not turn_found(turn_id=t, turn_text=text, chunks=chunks))


def _engine(
    *, workspace: Workspace, layer_id: int, question: str, budget: int
) -> tuple[list[ChunkView], int, list[str]]:
    """The engine's chunks, the exact token count of its context, and its warnings."""
    result = context_assemble(
        workspace=workspace, params=ContextParams(layer_id=layer_id, query=question, token_budget=budget)
    )
    tokens = tokenizer.count_tokens(result.context, result.encoding)
    return chunks_from_response(result.chunks), tokens, list(result.warnings)


def eval_questions(
    *,
    dataset: Dataset,
    loaded: Loaded,
    budgets: tuple[int, ...],
    scope: str = "conversation",
    warnings: set[str] | None = None,
) -> list[QuestionResult]:
    """Ask every question at every budget in `scope` (see SCOPES); distinct engine warnings are
    added to `warnings`."""
    if scope not in SCOPES:
        raise EvalError(f"scope must be one of {', '.join(SCOPES)}")
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding

    def count(text: str) -> int:
        return tokenizer.count_tokens(text, encoding)

    turns = dataset.turn_index()
    conversations = {c.id: c for c in dataset.conversations}
    vectors = _plain_vectors(dataset)
    pools = (
        {c.id: c.turns for c in dataset.conversations}
        if scope == "conversation"
        else dict.fromkeys(conversations, tuple(t for c in dataset.conversations for t in c.turns))
    )
    windows = {
        (c, budget): recency_window(turns=pool, budget=budget, count=count)
        for c, pool in pools.items()
        for budget in budgets
    }
    results: list[QuestionResult] = []
    for q in dataset.questions:
        layer_id = loaded.conversations[q.conversation].layer_id if scope == "conversation" else loaded.root_layer_id
        evidence = {turn_id: turns[turn_id].text for turn_id in q.evidence}
        own = {t.id: t for t in pools[q.conversation]}
        order = _fused_order(
            query=q.question,
            texts={t.id: t.text for t in own.values()},
            vectors={t: vectors[t] for t in own if t in vectors},
        )
        fused = [ChunkView(external_id=t, text=f"{own[t].role}: {own[t].text}") for t in order]
        for budget in budgets:
            chunks, tokens, said = _engine(
                workspace=loaded.workspace, layer_id=layer_id, question=q.question, budget=budget
            )
            if warnings is not None:
                warnings.update(said)
            results.append(
                QuestionResult(
                    question_id=q.id,
                    type=q.type,
                    budget=budget,
                    recall=question_recall(evidence=evidence, chunks=chunks),
                    recency=question_recall(evidence=evidence, chunks=windows[(q.conversation, budget)]),
                    fused=question_recall(
                        evidence=evidence, chunks=pack_in_order(chunks=fused, budget=budget, count=count)
                    ),
                    tokens=tokens,
                    missed=_missed(evidence, chunks),
                )
            )
    return results


def evaluate(
    *, dataset: Dataset, budgets: tuple[int, ...] = DEFAULT_BUDGETS, scope: str = "conversation", keep: bool = False
) -> EvalRun:
    """Load, embed, ask, and delete the workspace afterwards unless `keep`."""
    loaded = eval_load(dataset=dataset)
    try:
        started = time.perf_counter()
        warnings: set[str] = set()
        results = eval_questions(dataset=dataset, loaded=loaded, budgets=budgets, scope=scope, warnings=warnings)
        return EvalRun(
            budgets=budgets,
            scope=scope,
            results=tuple(results),
            conversations=len(dataset.conversations),
            turns=sum(len(c.turns) for c in dataset.conversations),
            load_seconds=loaded.load_seconds,
            run_seconds=time.perf_counter() - started,
            workspace_slug=loaded.workspace.slug,
            warnings=tuple(sorted(warnings)),
        )
    finally:
        if not keep:
            background.wait_idle(60)
            loaded.workspace.delete()
