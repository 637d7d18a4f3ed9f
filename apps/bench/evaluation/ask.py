"""Asking every question of a set at every budget: the service through `context_assemble` (what
`POST /api/v1/context/` calls) with the set's model and format, and the baselines packed on the
same turns.

The scope says where a question is asked: at its conversation's multi_session layer (the default, as
an agent in that conversation would), or at the company layer with every conversation in scope (the
others act as a haystack, closer to long-memory benchmarks; the baselines then see every turn too).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.test import override_settings

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.bench.evaluation.baselines import BASELINES, Packer, TurnIndex, plain_vectors
from apps.bench.evaluation.data import Dataset, Question, Turn
from apps.bench.evaluation.load import Loaded
from apps.core import embeddings, tokenizer
from apps.experiments.recall import ChunkView, Scoring, evidence_missed, question_recall

Progress = Callable[[str], None]
BUDGETS = (500, 1000, 2000, 4000)
SCOPES = ("conversation", "workspace")
# Measuring quality, the eval asks with a generous deadline (the request's `timeout_ms`, as a client
# may): on a loaded machine the default 500 ms would cut stages and score the load, not the ranking.
# Answers that still came back partial are counted in the report.
TIMEOUT_MS = 10_000


class AskError(ValueError):
    """The questions cannot be asked as requested (an unknown scope)."""


@dataclass(frozen=True)
class Answer:
    """One question at one budget: the recall of the service and of each baseline (None: a question
    without evidence, asked and not scored)."""

    question: Question
    budget: int
    recall: dict[str, float | None]  # "service" and each of BASELINES
    tokens: int  # the service's context, recounted in the model's encoding
    over_budget: bool
    non_turn_chunks: int
    non_turn_tokens: int  # the tokens of those chunks (each chunk's own count, as the packer paid it)
    elapsed_ms: float
    partial: bool
    missed: tuple[str, ...] = ()  # evidence the service left out
    selected: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class Run:
    dataset: Dataset
    scope: str
    budgets: tuple[int, ...]
    answers: tuple[Answer, ...]
    workspace_slug: str
    load_seconds: float
    run_seconds: float
    warnings: tuple[str, ...]
    timeout_ms: int = TIMEOUT_MS


class _Pool:
    """The turns a question is asked over, searchable and packable for the baselines."""

    def __init__(self, *, turns: Sequence[Turn], vectors: dict[str, np.ndarray], count: Callable[[str], int]) -> None:
        self.turns = {t.id: t for t in turns}
        self.index = TurnIndex(turns=turns, vectors=np.vstack([vectors[t.id] for t in turns]))
        self.packer = Packer(turns=turns, count=count)

    def evidence(self, question: Question) -> dict[str, str]:
        """The question's evidence turns, {id: content}, as recall reads them."""
        return {t: self.turns[t].content for t in question.evidence}

    def baselines(
        self, *, question: Question, rankings: dict[str, list[str]], budget: int, scoring: Scoring
    ) -> dict[str, float | None]:
        """Each baseline's recall at `budget`: its turns packed whole, as the set renders them."""
        packed = {name: self.packer.pack(order, budget) for name, order in rankings.items()}
        packed["recency"] = self.packer.recent(budget)
        return {
            name: question_recall(
                scoring=scoring,
                evidence=self.evidence(question),
                chunks=[ChunkView(external_id=i, text=self.turns[i].rendered) for i in packed[name]],
            )
            for name in BASELINES
        }


def _service(
    *, dataset: Dataset, loaded: Loaded, layer_id: int, question: Question, budget: int, pool: _Pool, timeout_ms: int
) -> tuple[Answer, list[str]]:
    started = time.perf_counter()
    result = context_assemble(
        workspace=loaded.workspace,
        params=ContextParams(
            layer_id=layer_id,
            query=question.question,
            token_budget=budget,
            model=dataset.model,
            format=dataset.format,
            timeout_ms=timeout_ms,
        ),
    )
    elapsed = (time.perf_counter() - started) * 1000
    tokens = _counter(dataset)(result.context)
    chunks = [ChunkView(external_id=c.external_id, text=c.text, truncated=c.truncated) for c in result.chunks]
    evidence = pool.evidence(question)
    selected = tuple(c.external_id for c in chunks if c.external_id in pool.turns)
    over = tokens > budget
    answer = Answer(
        question=question,
        budget=budget,
        recall={
            "service": question_recall(scoring=dataset.scoring, evidence=evidence, chunks=chunks, over_budget=over)
        },
        tokens=tokens,
        over_budget=over,
        non_turn_chunks=len(chunks) - len(selected),
        non_turn_tokens=sum(c.tokens for c in result.chunks if c.external_id not in pool.turns),
        elapsed_ms=elapsed,
        partial=result.partial,
        missed=evidence_missed(scoring=dataset.scoring, evidence=evidence, chunks=chunks),
        selected=selected,
    )
    return answer, list(result.warnings)


def _counter(dataset: Dataset) -> Callable[[str], int]:
    encoding = tokenizer.encoding_for_model(dataset.model or settings.DEFAULT_MODEL).encoding
    return lambda text: tokenizer.count_tokens(text, encoding)


def dataset_ask(
    *,
    dataset: Dataset,
    loaded: Loaded,
    budgets: tuple[int, ...],
    progress: Progress,
    scope: str = "conversation",
    limit: int | None = None,
    timeout_ms: int = TIMEOUT_MS,
) -> Run:
    """Every question (the first `limit` of each conversation, when given) at every budget, each
    asked in `scope` (SCOPES) with `timeout_ms` as its deadline (0: none)."""
    if scope not in SCOPES:
        raise AskError(f"scope must be one of {', '.join(SCOPES)}")
    started = time.perf_counter()
    turns = dataset.turns
    vectors = dict(zip((t.id for t in turns), plain_vectors(turns=turns, progress=progress), strict=True))
    count = _counter(dataset)
    whole = _Pool(turns=turns, vectors=vectors, count=count) if scope == "workspace" else None
    questions = [
        q for c in dataset.conversations for q in [q for q in dataset.questions if q.conversation == c.id][:limit]
    ]
    answers: list[Answer] = []
    warnings: set[str] = set()
    # The cache could answer from an earlier run of another code version over a reused workspace.
    with override_settings(ASSEMBLY_CACHE_SECONDS=0):
        for conversation in dataset.conversations:
            asked = [q for q in questions if q.conversation == conversation.id]
            if not asked:
                continue
            pool = whole or _Pool(turns=conversation.turns, vectors=vectors, count=count)
            layer_id = loaded.layers[conversation.id] if scope == "conversation" else loaded.root_layer_id
            for question in asked:
                query_vector, _ = embeddings.embed_query(question.question)
                rankings = pool.index.rankings(query=question.question, query_vector=query_vector)
                for budget in budgets:
                    answer, said = _service(
                        dataset=dataset,
                        loaded=loaded,
                        layer_id=layer_id,
                        question=question,
                        budget=budget,
                        pool=pool,
                        timeout_ms=timeout_ms,
                    )
                    warnings.update(said)
                    answer.recall.update(
                        pool.baselines(question=question, rankings=rankings, budget=budget, scoring=dataset.scoring)
                    )
                    answers.append(answer)
                if len(answers) // len(budgets) % 25 == 0 or len(answers) == len(questions) * len(budgets):
                    progress(f"questions: {len(answers) // len(budgets)}/{len(questions)}")
    return Run(
        dataset=dataset,
        scope=scope,
        budgets=budgets,
        answers=tuple(answers),
        workspace_slug=loaded.workspace.slug,
        load_seconds=loaded.load_seconds,
        run_seconds=time.perf_counter() - started,
        warnings=tuple(sorted(warnings)),
        timeout_ms=timeout_ms,
    )
