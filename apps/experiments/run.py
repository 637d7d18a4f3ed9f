"""A run in the background: every question of the set asked with profile A and with profile B.

Each answer is a page run of `context_preview` (what the preview page calls: never from the cache,
recorded with `origin=page`, so it stays out of the agents' figures and its trace opens in the
console), scored by the lab's recall rule (recall.py, Scoring.IDS: an expected item counts as found
when a returned chunk carries its external id; an answer above its budget scores 0). The sides take
turns going first, so neither always meets a cold cache of the database or the embedder.
A question's two results are stored together with the run's progress, after both answers.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.services import context_preview
from apps.core.errors import DomainError
from apps.experiments.models import ExperimentRun, QuestionResult, SetQuestion
from apps.experiments.recall import ChunkView, Scoring, evidence_missed, question_recall

log = logging.getLogger(__name__)

# Measuring quality, a run asks with a generous deadline, as `eval_locomo` does (its TIMEOUT_MS): on a
# loaded machine the default 500 ms would cut stages and score the load, not the ranking. Answers
# that still came back partial are counted.
TIMEOUT_MS = 10_000
MAX_WARNINGS = 20
State = ExperimentRun.State


def _ask(run: ExperimentRun, question: SetQuestion, side: str, profile: str) -> tuple[QuestionResult, list[str]]:
    params = ContextParams(
        layer_id=run.layer_id,
        query=question.question,
        token_budget=run.token_budget,
        profile=profile or None,
        timeout_ms=TIMEOUT_MS,
    )
    result = context_preview(workspace=run.workspace, params=params, what_if=(), origin=RecordOrigin.PAGE).result
    chunks = [ChunkView(external_id=c.external_id, text=c.text, truncated=c.truncated) for c in result.chunks]
    evidence = dict.fromkeys(question.expected, "")  # by id: the IDS rule reads no text
    over = result.total_tokens > result.token_budget
    scored = QuestionResult(
        run=run,
        question=question,
        side=side,
        recall=question_recall(scoring=Scoring.IDS, evidence=evidence, chunks=chunks, over_budget=over),
        missed=list(evidence_missed(scoring=Scoring.IDS, evidence=evidence, chunks=chunks)),
        tokens=result.total_tokens,
        chunks=len(result.chunks),
        elapsed_ms=result.elapsed_ms,
        partial=result.partial,
        trace_id=result.trace_id,
    )
    return scored, list(result.warnings)


def _sides(run: ExperimentRun, index: int) -> list[tuple[str, str]]:
    sides = [(QuestionResult.Side.A.value, run.profile_a), (QuestionResult.Side.B.value, run.profile_b)]
    return sides if index % 2 == 0 else sides[::-1]


def _finish(run_id: int, state: str, **fields: object) -> str:
    now = timezone.now()
    ExperimentRun.objects.filter(pk=run_id).update(state=state, updated_at=now, finished_at=now, **fields)
    return state


def experiment_execute(*, run_id: int) -> str:
    """Run a queued run to its end, or until someone asks it to stop (between two questions); returns its
    state. Idempotent: only a queued run is claimed, so a second dispatch of the same id does nothing."""
    claimed = ExperimentRun.objects.filter(pk=run_id, state=State.QUEUED).update(
        state=State.RUNNING, updated_at=timezone.now()
    )
    run = ExperimentRun.objects.select_related("workspace").filter(pk=run_id).first()
    if run is None:
        return "gone"
    if not claimed:
        return str(run.state)
    if run.layer_id is None:
        return _finish(run_id, State.FAILED, error="the layer was deleted before the run started")
    warnings: list[str] = []
    try:
        for index, question in enumerate(SetQuestion.objects.filter(question_set_id=run.question_set_id)):
            if ExperimentRun.objects.filter(pk=run_id, stop_requested=True).exists():
                return _finish(run_id, State.STOPPED)
            answers = [_ask(run, question, side, profile) for side, profile in _sides(run, index)]
            for said in (w for _result, words in answers for w in words):
                if said not in warnings and len(warnings) < MAX_WARNINGS:
                    warnings.append(said)
            with transaction.atomic():
                QuestionResult.objects.bulk_create(result for result, _words in answers)
                ExperimentRun.objects.filter(pk=run_id).update(
                    done=index + 1, updated_at=timezone.now(), warnings=warnings
                )
    except DomainError as exc:  # a request the service refuses (the layer deleted meanwhile, a budget)
        return _finish(run_id, State.FAILED, error=f"{exc.message} ({exc.code})")
    except Exception as exc:
        log.exception("experiment run %s failed", run_id)
        _finish(run_id, State.FAILED, error=f"the run stopped on an unexpected error ({type(exc).__name__})")
        raise
    return _finish(run_id, State.DONE)
