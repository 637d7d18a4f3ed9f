"""`manage.py bench_redaction`: every regex that sees user text, timed on hostile inputs, one row each."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.bench.regex_cost import hostile, patterns


def test_it_finds_the_detectors_and_the_signature_patterns() -> None:
    names = {p.name for p in patterns()}
    assert "entries._VALUE_THEN_NAME" in names and "signature._FRAME_LINES" in names
    assert any(name.startswith("tokens.TOKEN_DETECTORS[") for name in names)
    assert len(names) > 100


def test_a_hostile_input_is_exactly_its_size() -> None:
    assert hostile("value:", 10) == "value:valu"
    assert len(hostile("value:", 1_000, tail=True)) == 1_000


def test_the_command_prints_a_row_per_pattern_and_surface() -> None:
    out = StringIO()
    call_command("bench_redaction", "--sizes", "200,400", "--only", "_VALUE_THEN_NAME", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:2] == ["what", "200"] and lines[1].startswith("entries._VALUE_THEN_NAME ")
    assert "worst unit" in lines[1]


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(CommandError):
        call_command("bench_redaction", "--sizes", "ten")
