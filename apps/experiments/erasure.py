"""Erasure in question sets and experiment runs (apps/core/erasure.py).

A question that holds a text match keeps its place with the text replaced by the marker; an expected
external id that holds it, or starts with an erased prefix, becomes the marker (the item is gone: a
later run counts it missed); a run's error, warnings and layer name (a deleted session's, e.g.
"proxy-user:alice") are rewritten. The figures of past runs stay.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q

from apps.core.erasure import MARKER, RECORDS, ErasureRun, contains, eraser, scrub, scrub_all
from apps.experiments.models import ExperimentRun, SetQuestion


def _expected(value: Any, run: ErasureRun) -> Any:
    if not isinstance(value, list):
        return value
    prefix, text = run.target.external_id_prefix, run.target.text
    return [
        MARKER if isinstance(v, str) and ((prefix and v.startswith(prefix)) or (text and contains(v, text))) else v
        for v in value
    ]


def experiments_erase(run: ErasureRun) -> None:
    text, prefix, texts = run.target.text, run.target.external_id_prefix, run.texts()
    if not (texts or prefix):
        return
    named = Q(pk__in=[])
    if text:
        named |= Q(question__icontains=text) | Q(expected__icontains=text)
    if prefix:
        named |= Q(expected__icontains=prefix)
    questions = [
        q
        for q in SetQuestion.objects.filter(question_set__workspace_id=run.workspace_id).filter(named)
        if scrub(q.question, text) != q.question or _expected(q.expected, run) != q.expected
    ]
    matching = Q(pk__in=[])
    for t in texts:
        matching |= Q(error__icontains=t) | Q(warnings__icontains=t) | Q(layer_name__icontains=t)
    runs = list(ExperimentRun.objects.filter(workspace_id=run.workspace_id).filter(matching))
    run.count("experiment_questions", found=len(questions))
    run.count("experiment_runs", found=len(runs))
    if run.dry_run:
        return
    with transaction.atomic():
        for q in questions:
            q.question, q.expected = scrub(q.question, text), _expected(q.expected, run)
        SetQuestion.objects.bulk_update(questions, ["question", "expected"])
        for r in runs:
            r.error, r.layer_name = scrub_all(r.error, texts), scrub_all(r.layer_name, texts)
            r.warnings = [scrub_all(w, texts) if isinstance(w, str) else w for w in r.warnings]
        ExperimentRun.objects.bulk_update(runs, ["error", "warnings", "layer_name"])
    run.count("experiment_questions", rewritten=len(questions))
    run.count("experiment_runs", rewritten=len(runs))


def register() -> None:
    eraser(RECORDS, "experiments", experiments_erase)
