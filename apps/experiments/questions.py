"""Reading a question set from JSON lines: one `{"question": "...", "expected": ["item external id", ...]}`
per line, blank lines skipped, other keys ignored (an export may carry answers or categories).

Every problem is reported at once, each with its line and a stable code, so a person fixes the file
in one go; nothing is stored unless every line is right.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from apps.core.errors import InvalidInput
from apps.experiments.errors import QUESTION_SET_INVALID

MAX_BYTES = 1024 * 1024
MAX_QUESTIONS = 500
MAX_QUESTION_CHARS = 4000
MAX_EXPECTED = 100
MAX_EXTERNAL_ID_CHARS = 200  # an item's external id (layers.Item.external_id)
MAX_REPORTED = 20  # line errors listed; the rest are counted


@dataclass(frozen=True)
class QuestionInput:
    """One question and the external ids of the items that answer it, in the file's order."""

    question: str
    expected: tuple[str, ...]
    line: int = 0  # in the file it came from


@dataclass(frozen=True)
class LineError:
    """What is wrong with one line (0: the file as a whole)."""

    line: int
    code: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message} ({self.code})"


class QuestionSetInvalid(InvalidInput):
    """The file is not a question set; `errors` says where and why."""

    code = QUESTION_SET_INVALID.code

    def __init__(self, errors: list[LineError]) -> None:
        shown = errors[:MAX_REPORTED]
        more = f" and {len(errors) - len(shown)} more" if len(errors) > len(shown) else ""
        super().__init__(
            f"{len(errors)} problem{'s' if len(errors) != 1 else ''} in the file{more}",
            details={"errors": [e.__dict__ for e in shown]},
        )
        self.errors = shown
        self.more = len(errors) - len(shown)


def _line(number: int, text: str) -> QuestionInput | LineError:
    try:
        value = json.loads(text)
    except ValueError as exc:
        return LineError(number, "not_json", f"not valid JSON ({exc.args[0].split(':')[0]})")
    if not isinstance(value, dict):
        return LineError(number, "not_an_object", 'each line must be an object: {"question": ..., "expected": [...]}')
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        return LineError(number, "question_missing", '"question" must be a non-empty string')
    if len(question) > MAX_QUESTION_CHARS:
        return LineError(number, "question_too_long", f'"question" is longer than {MAX_QUESTION_CHARS} characters')
    expected = value.get("expected")
    if not isinstance(expected, list) or not expected:
        return LineError(number, "expected_missing", '"expected" must be a non-empty list of item external ids')
    if len(expected) > MAX_EXPECTED:
        return LineError(number, "expected_too_long", f'"expected" names more than {MAX_EXPECTED} items')
    if not all(isinstance(e, str) and e.strip() and len(e) <= MAX_EXTERNAL_ID_CHARS for e in expected):
        return LineError(
            number,
            "expected_invalid",
            f'every entry of "expected" must be an external id: a non-empty string of at most {MAX_EXTERNAL_ID_CHARS}'
            " characters",
        )
    return QuestionInput(
        question=question.strip(), expected=tuple(dict.fromkeys(e.strip() for e in expected)), line=number
    )


def questions_parse(data: bytes) -> list[QuestionInput]:
    """The questions of a JSON-lines file; raises QuestionSetInvalid with every problem found."""
    if len(data) > MAX_BYTES:
        raise QuestionSetInvalid([LineError(0, "file_too_large", f"the file is larger than {MAX_BYTES // 1024} KiB")])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QuestionSetInvalid([LineError(0, "not_utf8", f"the file is not UTF-8 text (byte {exc.start})")]) from exc
    questions: list[QuestionInput] = []
    errors: list[LineError] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parsed = _line(number, raw)
        if isinstance(parsed, LineError):
            errors.append(parsed)
        else:
            questions.append(parsed)
    if not questions and not errors:
        errors.append(LineError(0, "empty", "the file has no questions"))
    if len(questions) > MAX_QUESTIONS:
        errors.append(LineError(0, "too_many_questions", f"a set holds at most {MAX_QUESTIONS} questions"))
    if errors:
        raise QuestionSetInvalid(errors)
    return questions


def unknown_expected(*, questions: list[QuestionInput], known: set[str]) -> QuestionSetInvalid | None:
    """The error for expected ids that name no item of the workspace (`known`: those that do), line by
    line; None when every id names an item."""
    errors = [
        LineError(
            q.line, "expected_unknown", f"no item of this workspace has the external id {', '.join(map(repr, missing))}"
        )
        for q in questions
        if (missing := [e for e in q.expected if e not in known])
    ]
    return QuestionSetInvalid(errors) if errors else None
