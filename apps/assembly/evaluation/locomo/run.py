"""Asking every scored question at every budget: the service through `context_assemble` (what
`POST /api/v1/context/` calls) at the sample's multi_session layer with `model: gpt-4` and
`format: text`, and the baselines packed best-first on the same turns.

Evidence recall of one answer = |evidence ∩ selected turns| / |evidence|, where selected turns are
the returned chunks whose external id is a turn of the sample; an answer whose context recounts
above the budget in cl100k_base scores 0 (and is counted as a violation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.test import override_settings

from apps.assembly.evaluation.locomo.baselines import SampleIndex, plain_vectors, render
from apps.assembly.evaluation.locomo.data import LocomoSet, Question, Turn
from apps.assembly.evaluation.locomo.load import Loaded
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import embeddings, tokenizer

Progress = Callable[[str], None]
MODEL = "gpt-4"
FORMAT = "text"
BUDGETS = (500, 1000, 2000, 4000)
BASELINES = ("fusion", "bm25", "dense")
SEPARATOR = "\n\n"
# Measuring quality, the eval asks with a generous deadline (the request's `timeout_ms`, as a client
# may): on a loaded machine the default 500 ms would cut stages and score the load, not the ranking.
# Answers that still came back partial are counted in the report.
TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Answer:
    """One question at one budget: recall of the service and of each baseline."""

    question: Question
    budget: int
    recall: dict[str, float]  # "service" and each of BASELINES
    tokens: int  # the service's context, recounted in cl100k_base
    over_budget: bool
    non_turn_chunks: int
    elapsed_ms: float
    partial: bool
    missed: tuple[str, ...] = ()  # evidence the service left out
    selected: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class LocomoRun:
    dataset: LocomoSet
    budgets: tuple[int, ...]
    answers: tuple[Answer, ...]
    workspace_slug: str
    load_seconds: float
    run_seconds: float
    warnings: tuple[str, ...]
    timeout_ms: int = TIMEOUT_MS


def _count(text: str) -> int:
    return tokenizer.count_tokens(text, tokenizer.encoding_for_model(MODEL).encoding)


class _Packer:
    """Best-first packing of rendered turns with their token costs counted once."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.text = {t.external_id: render(t) for t in turns}
        self.cost = {k: _count(v) for k, v in self.text.items()}
        self.sep = _count(SEPARATOR)

    def pack(self, order: Sequence[str], budget: int) -> list[str]:
        """Whole turns in order, skipping any that would pass the budget; the joined text is then
        recounted exactly and the tail dropped until it fits."""
        taken: list[str] = []
        used = 0
        for key in order:
            cost = self.cost[key] + (self.sep if taken else 0)
            if used + cost <= budget:
                taken.append(key)
                used += cost
        while taken and _count(SEPARATOR.join(self.text[k] for k in taken)) > budget:
            taken.pop()
        return taken


def _recall(evidence: frozenset[str], selected: set[str]) -> float:
    return len(evidence & selected) / len(evidence)


def _service(
    loaded: Loaded, question: Question, budget: int, turn_ids: set[str], timeout_ms: int
) -> tuple[Answer, list[str]]:
    started = time.perf_counter()
    result = context_assemble(
        workspace=loaded.workspace,
        params=ContextParams(
            layer_id=loaded.layers[question.sample],
            query=question.question,
            token_budget=budget,
            model=MODEL,
            format=FORMAT,
            timeout_ms=timeout_ms,
        ),
    )
    elapsed = (time.perf_counter() - started) * 1000
    tokens = _count(result.context)
    ids = [c.external_id for c in result.chunks]
    selected = {i for i in ids if i in turn_ids}
    over = tokens > budget
    answer = Answer(
        question=question,
        budget=budget,
        recall={"service": 0.0 if over else _recall(question.evidence, selected)},
        tokens=tokens,
        over_budget=over,
        non_turn_chunks=sum(1 for i in ids if i not in turn_ids),
        elapsed_ms=elapsed,
        partial=result.partial,
        missed=tuple(sorted(question.evidence - selected)),
        selected=tuple(i for i in ids if i in turn_ids),
    )
    return answer, list(result.warnings)


def locomo_ask(
    *,
    dataset: LocomoSet,
    loaded: Loaded,
    budgets: tuple[int, ...],
    progress: Progress,
    limit: int | None = None,
    timeout_ms: int = TIMEOUT_MS,
) -> LocomoRun:
    """Every scored question (the first `limit` per sample, when given) at every budget, each asked
    with `timeout_ms` as its deadline (0: none)."""
    started = time.perf_counter()
    vectors = plain_vectors(turns=[t for s in dataset.samples for t in s.turns], progress=progress)
    answers: list[Answer] = []
    warnings: set[str] = set()
    offset = 0
    asked = 0
    wanted = sum(
        min(len([q for q in dataset.questions if q.sample == s.id]), limit or len(dataset.questions))
        for s in dataset.samples
    )
    # The cache could answer from an earlier run of another code version over a reused workspace.
    with override_settings(ASSEMBLY_CACHE_SECONDS=0):
        for sample in dataset.samples:
            turns = sample.turns
            index = SampleIndex(sample=sample, vectors=vectors[offset : offset + len(turns)])
            offset += len(turns)
            packer = _Packer(turns)
            turn_ids = set(packer.text)
            questions = [q for q in dataset.questions if q.sample == sample.id][:limit]
            for question in questions:
                query_vector, _ = embeddings.embed_query(question.question)
                rankings = index.rankings(query=question.question, query_vector=query_vector)
                for budget in budgets:
                    answer, said = _service(loaded, question, budget, turn_ids, timeout_ms)
                    warnings.update(said)
                    for name in BASELINES:
                        answer.recall[name] = _recall(question.evidence, set(packer.pack(rankings[name], budget)))
                    answers.append(answer)
                asked += 1
                if asked % 25 == 0 or asked == wanted:
                    progress(f"questions: {asked}/{wanted}")
    return LocomoRun(
        dataset=dataset,
        budgets=budgets,
        answers=tuple(answers),
        workspace_slug=loaded.workspace.slug,
        load_seconds=loaded.load_seconds,
        run_seconds=time.perf_counter() - started,
        warnings=tuple(sorted(warnings)),
        timeout_ms=timeout_ms,
    )
