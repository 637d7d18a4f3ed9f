"""The experiments app's parts of a workspace archive (apps/core/archive): question sets and their
questions (expected items are named by external id, which an import keeps). Runs and their results
are not archived: like assembly records, they are the source instance's history."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from apps.core.archive.parts import ArchivePart, ExportScope, RestoreScope, Row, batched, model_part, register
from apps.experiments.models import QuestionSet, SetQuestion

QUESTION_FIELDS = ("position", "question", "expected")


def questions_export(scope: ExportScope) -> Iterable[Row]:
    rows = SetQuestion.objects.filter(question_set__workspace_id=scope.workspace_id).order_by("id")
    for row in rows.values("question_set_id", *QUESTION_FIELDS).iterator(chunk_size=2000):
        yield {"question_set": row.pop("question_set_id"), **row}


def questions_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    count = 0
    for batch in batched(rows, 1000):
        SetQuestion.objects.bulk_create(
            SetQuestion(
                question_set_id=scope.ids.get("question_set", row["question_set"]),
                **{f: row[f] for f in QUESTION_FIELDS},
            )
            for row in batch
        )
        count += len(batch)
    return count


def register_parts() -> None:
    register(
        model_part(
            name="question_sets",
            order=160,
            model=QuestionSet,
            kind="question_set",
            fields=("name", "source", "created_at"),
        ),
        ArchivePart(
            name="set_questions",
            order=170,
            export=questions_export,
            restore=questions_restore,
            occupied=lambda workspace_id: False,  # rows of sets: the question_sets part decides
            count=lambda s: SetQuestion.objects.filter(question_set__workspace_id=s.workspace_id).count(),
        ),
    )
