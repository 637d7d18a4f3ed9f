"""Reads of the experiments, scoped to one workspace: sets, runs with their figures, a run's questions."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Avg, Count, Q, QuerySet
from django.utils import timezone

from apps.core.errors import NotFound
from apps.experiments.errors import EXPERIMENT_RUN_NOT_FOUND, QUESTION_SET_NOT_FOUND
from apps.experiments.models import ExperimentRun, QuestionResult, QuestionSet, SetQuestion
from apps.workspaces.models import Workspace

# A run with no progress for this long is shown as stalled (its process was stopped mid-run).
STALLED_AFTER = timedelta(minutes=10)
RECENT_RUNS = 50


def question_sets_list(*, workspace: Workspace) -> QuerySet[QuestionSet]:
    """The workspace's sets, newest first, each with its number of questions (`size`) and runs."""
    return QuestionSet.objects.filter(workspace=workspace).annotate(
        size=Count("questions", distinct=True), run_count=Count("runs", distinct=True)
    )


def question_set_get(*, workspace: Workspace, set_id: int) -> QuestionSet:
    found = question_sets_list(workspace=workspace).filter(pk=set_id).first()
    if found is None:
        raise NotFound("no such question set in this workspace", code=QUESTION_SET_NOT_FOUND)
    return found


def set_questions(*, question_set: QuestionSet) -> list[SetQuestion]:
    return list(SetQuestion.objects.filter(question_set=question_set))


def _side_figures(side: str) -> dict[str, Avg]:
    only = Q(results__side=side)
    return {
        f"recall_{side}": Avg("results__recall", filter=only),
        f"tokens_{side}": Avg("results__tokens", filter=only),
        f"latency_{side}": Avg("results__elapsed_ms", filter=only),
    }


def runs_list(
    *, workspace: Workspace, limit: int = RECENT_RUNS, question_set: QuestionSet | None = None
) -> list[ExperimentRun]:
    """The newest runs, each with its sides' mean recall, tokens and latency (`recall_a`, ... `latency_b`;
    None before a result is in), in one query."""
    runs = ExperimentRun.objects.filter(workspace=workspace).select_related("question_set")
    if question_set is not None:
        runs = runs.filter(question_set=question_set)
    return list(runs.annotate(**_side_figures("a"), **_side_figures("b"))[:limit])


def run_get(*, workspace: Workspace, run_id: int) -> ExperimentRun:
    found = ExperimentRun.objects.filter(workspace=workspace, pk=run_id).select_related("question_set").first()
    if found is None:
        raise NotFound("no such experiment run in this workspace", code=EXPERIMENT_RUN_NOT_FOUND)
    return found


def run_stalled(*, run: ExperimentRun, now: datetime | None = None) -> bool:
    """A run that says it is running or queued but has not moved for STALLED_AFTER."""
    active = run.state in (ExperimentRun.State.QUEUED, ExperimentRun.State.RUNNING)
    return active and (now or timezone.now()) - run.updated_at > STALLED_AFTER


@dataclass(frozen=True)
class SideFigures:
    """One side of a run over the questions answered so far."""

    profile: str  # "" : the defaults
    answered: int
    scored: int  # answers with expected items
    recall: float | None  # mean over the scored answers
    full_recall: int  # scored answers that found every expected item
    tokens: float | None  # mean
    latency_p50: float | None
    latency_p95: float | None
    partial: int


@dataclass(frozen=True)
class QuestionRow:
    """One question with its answer on each side (None: not asked yet)."""

    position: int
    question: str
    expected: list[str]
    a: QuestionResult | None
    b: QuestionResult | None

    @property
    def recall_change(self) -> float | None:
        """B's recall less A's."""
        if self.a is None or self.b is None or self.a.recall is None or self.b.recall is None:
            return None
        return self.b.recall - self.a.recall


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def _figures(profile: str, results: list[QuestionResult]) -> SideFigures:
    scored = [r.recall for r in results if r.recall is not None]
    latencies = [r.elapsed_ms for r in results]
    return SideFigures(
        profile=profile,
        answered=len(results),
        scored=len(scored),
        recall=statistics.fmean(scored) if scored else None,
        full_recall=sum(1 for value in scored if value >= 1.0),
        tokens=statistics.fmean(r.tokens for r in results) if results else None,
        latency_p50=_percentile(latencies, 0.5),
        latency_p95=_percentile(latencies, 0.95),
        partial=sum(1 for r in results if r.partial),
    )


def run_results(*, run: ExperimentRun) -> tuple[SideFigures, SideFigures, list[QuestionRow]]:
    """Both sides' figures and every question of the run's set with its answers, in the set's order."""
    results = list(QuestionResult.objects.filter(run=run))
    by_question: dict[tuple[int, str], QuestionResult] = {(r.question_id, r.side): r for r in results}
    rows = [
        QuestionRow(
            position=q.position + 1,
            question=q.question,
            expected=list(q.expected),
            a=by_question.get((q.pk, QuestionResult.Side.A)),
            b=by_question.get((q.pk, QuestionResult.Side.B)),
        )
        for q in SetQuestion.objects.filter(question_set_id=run.question_set_id)
    ]
    a = _figures(run.profile_a, [r for r in results if r.side == QuestionResult.Side.A])
    b = _figures(run.profile_b, [r for r in results if r.side == QuestionResult.Side.B])
    return a, b, rows
