"""Reading a question set from JSON lines: every problem at once, each with its line and a stable code."""

from __future__ import annotations

import json

import pytest

from apps.experiments.questions import (
    MAX_BYTES,
    MAX_QUESTIONS,
    QuestionInput,
    QuestionSetInvalid,
    questions_parse,
    unknown_expected,
)


def lines(*rows: object) -> bytes:
    return "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows).encode()


def codes(data: bytes) -> list[tuple[int, str]]:
    with pytest.raises(QuestionSetInvalid) as caught:
        questions_parse(data)
    return [(error.line, error.code) for error in caught.value.errors]


def test_it_reads_questions_and_skips_blank_lines_and_other_keys() -> None:
    data = lines({"question": " Which car? ", "expected": ["D1:2", "D1:2", "D1:4"], "answer": "a Prius"}, "", "  ")
    assert questions_parse(b"\xef\xbb\xbf" + data) == [
        QuestionInput(question="Which car?", expected=("D1:2", "D1:4"), line=1)
    ]


def test_it_names_every_bad_line_with_its_code() -> None:
    data = lines(
        {"question": "fine", "expected": ["a"]},
        "{not json",
        ["a list"],
        {"expected": ["a"]},
        {"question": "no ids"},
        {"question": "empty ids", "expected": []},
        {"question": "bad id", "expected": ["ok", 7]},
        {"question": "x" * 5000, "expected": ["a"]},
    )
    assert codes(data) == [
        (2, "not_json"),
        (3, "not_an_object"),
        (4, "question_missing"),
        (5, "expected_missing"),
        (6, "expected_missing"),
        (7, "expected_invalid"),
        (8, "question_too_long"),
    ]


def test_it_refuses_what_is_not_a_set_of_questions() -> None:
    assert codes(b"") == [(0, "empty")]
    assert codes(b"\n\n") == [(0, "empty")]
    assert codes(b"\xff\xfe{") == [(0, "not_utf8")]
    assert codes(b" " * (MAX_BYTES + 1)) == [(0, "file_too_large")]
    many = lines(*({"question": f"q{n}", "expected": ["a"]} for n in range(MAX_QUESTIONS + 1)))
    assert codes(many) == [(0, "too_many_questions")]


def test_it_lists_twenty_problems_and_counts_the_rest() -> None:
    with pytest.raises(QuestionSetInvalid) as caught:
        questions_parse(b"\n".join(b"nope" for _ in range(25)))
    assert len(caught.value.errors) == 20 and caught.value.more == 5
    assert "25 problems" in caught.value.message and "5 more" in caught.value.message
    assert caught.value.code == "question_set_invalid"


def test_it_names_the_expected_ids_no_item_carries() -> None:
    questions = questions_parse(
        lines({"question": "a", "expected": ["x"]}, "", {"question": "b", "expected": ["x", "y"]})
    )
    error = unknown_expected(questions=questions, known={"x"})
    assert error is not None
    assert [(e.line, e.code) for e in error.errors] == [(3, "expected_unknown")]
    assert "'y'" in error.errors[0].message
    assert unknown_expected(questions=questions, known={"x", "y"}) is None
