"""Writes of the experiments: a question set from an upload, a run started in the background."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.assembly.selectors import RecordFilters, assembly_records_list
from apps.core import background
from apps.core.errors import Conflict, InvalidInput
from apps.core.field_errors import INVALID_NAME
from apps.experiments.errors import DUPLICATE_QUESTION_SET, NO_QUERIES, NOT_IN_WORKSPACE
from apps.experiments.models import ExperimentRun, QuestionSet, SetQuestion
from apps.experiments.questions import MAX_QUESTIONS, QuestionInput, questions_parse, unknown_expected
from apps.layers.models import Layer
from apps.layers.selectors import item_external_ids, item_external_ids_known
from apps.workspaces.models import Workspace

MAX_NAME_CHARS = 200
MAX_RECORDS_READ = 20 * MAX_QUESTIONS  # a console search's newest records read for its questions


def question_set_create(
    *,
    workspace: Workspace,
    name: str,
    questions: list[QuestionInput],
    source: str = QuestionSet.Source.UPLOAD,
    created_by: Any = None,
) -> QuestionSet:
    """A named set of these questions; raises Conflict (`duplicate_question_set`) on a name in use."""
    name = name.strip()
    if not name or len(name) > MAX_NAME_CHARS:
        raise InvalidInput(f"a set needs a name of 1 to {MAX_NAME_CHARS} characters", code=INVALID_NAME)
    try:
        with transaction.atomic():
            created = QuestionSet.objects.create(workspace=workspace, name=name, source=source, created_by=created_by)
            SetQuestion.objects.bulk_create(
                SetQuestion(question_set=created, position=i, question=q.question, expected=list(q.expected))
                for i, q in enumerate(questions)
            )
    except IntegrityError as exc:
        raise Conflict(f"a question set named {name!r} exists already", code=DUPLICATE_QUESTION_SET) from exc
    return created


def question_set_upload(*, workspace: Workspace, name: str, data: bytes, created_by: Any = None) -> QuestionSet:
    """A set from a JSON-lines file (questions.py); every expected id must name an item of the workspace.
    Raises QuestionSetInvalid with every problem of the file, or question_set_create's errors."""
    questions = questions_parse(data)
    known = item_external_ids_known(workspace_id=workspace.pk, external_ids=(e for q in questions for e in q.expected))
    problem = unknown_expected(questions=questions, known=known)
    if problem is not None:
        raise problem
    return question_set_create(workspace=workspace, name=name, questions=questions, created_by=created_by)


def question_set_from_records(
    *, workspace: Workspace, name: str, filters: RecordFilters, created_by: Any = None
) -> QuestionSet:
    """A set of the queries of the assemblies the console's search finds: newest first, each query once,
    at most MAX_QUESTIONS, from its newest MAX_RECORDS_READ records; each expects the items its agent
    reported it used (`used_packages`, those with an external id), and a query without such a report is
    asked and not scored. Raises InvalidInput (`no_queries`) when the search finds no query."""
    questions: dict[str, set[int]] = {}
    records = assembly_records_list(workspace=workspace, filters=filters)
    for query, used in records.values_list("request__query", "used_packages")[:MAX_RECORDS_READ]:
        text = str(query or "").strip()
        if not text or (text not in questions and len(questions) >= MAX_QUESTIONS):
            continue
        questions.setdefault(text, set()).update(used or ())
    if not questions:
        raise InvalidInput("the search finds no assembly with a query", code=NO_QUERIES)
    external = item_external_ids(workspace_id=workspace.pk, item_ids={i for used in questions.values() for i in used})
    inputs = [
        QuestionInput(question=text, expected=tuple(sorted({external[i] for i in used if i in external})))
        for text, used in questions.items()
    ]
    return question_set_create(
        workspace=workspace, name=name, questions=inputs, source=QuestionSet.Source.CONSOLE, created_by=created_by
    )


def experiment_start(
    *,
    workspace: Workspace,
    question_set: QuestionSet,
    layer: Layer,
    profile_a: str,
    profile_b: str,
    token_budget: int | None,
    created_by: Any = None,
) -> ExperimentRun:
    """A run of the set at `layer` with profiles A and B ("": the defaults) at `token_budget` (None: each
    profile's own), queued for the background
    (apps/experiments/run.py) once this transaction commits."""
    from apps.experiments.tasks import experiment_run

    if question_set.workspace_id != workspace.pk or layer.workspace_id != workspace.pk:
        raise InvalidInput("the set and the layer must be the workspace's own", code=NOT_IN_WORKSPACE)
    run = ExperimentRun.objects.create(
        workspace=workspace,
        question_set=question_set,
        layer=layer,
        layer_name=layer.name,
        profile_a=profile_a,
        profile_b=profile_b,
        token_budget=token_budget,
        total=question_set.questions.count(),
        created_by=created_by,
        updated_at=timezone.now(),
    )
    background.enqueue(experiment_run, run.pk)
    return run


def experiment_stop(*, run: ExperimentRun) -> None:
    """Stop a run: a queued one at once, a running one before its next question (run.py); the results
    stored so far stay. A run that has ended is left as it is."""
    now = timezone.now()
    queued = ExperimentRun.objects.filter(pk=run.pk, state=ExperimentRun.State.QUEUED)
    if queued.update(state=ExperimentRun.State.STOPPED, stop_requested=True, updated_at=now, finished_at=now):
        return
    ExperimentRun.objects.filter(pk=run.pk, state=ExperimentRun.State.RUNNING).update(stop_requested=True)
