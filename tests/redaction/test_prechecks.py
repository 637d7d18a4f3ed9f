"""The cheap pre-checks that let a short query skip detectors must never skip one that would match.

Each check is compared with the regexes it stands for, over the corpus, every string in the
redaction tests, each match cut out on its own (the shortest text that still holds it), and
variants with the non-ASCII letters that `(?i)` folds onto ASCII ones.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from apps.redaction import context
from apps.redaction.redactor import TOKENS, redact
from apps.redaction.tokens import could_hold_token

HERE = Path(__file__).parent


def _texts() -> list[str]:
    texts = [case["text"] for name in ("secrets.json", "benign.json") for case in json.loads((HERE / name).read_text())]
    for path in HERE.glob("test_*.py"):
        texts += [
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 3
        ]
    return texts


TEXTS = _texts()
# The shortest example of each short-bodied detector.
MINIMAL = [
    "xapp-1-A-1-a",
    "-----BEGIN PRIVATE KEY-----",
    "eyJabcdefgh.eyJabcd.",
    "pk.eyJa.abcdefghij",
    "sk_live_abcdefghij",
    "SG.abcdefghijklmnop.abcdefghijklmnop",
    "AAAA1234567:APA91b" + "a" * 60,
    "abc1Q~" + "a" * 31,
]


def _pieces(pattern: re.Pattern[str]) -> list[str]:
    """Every match of `pattern` in the texts, alone and between spaces, plus the texts themselves."""
    found = [m.group() for text in TEXTS + MINIMAL for m in pattern.finditer(text)]
    return TEXTS + MINIMAL + found + [f" {piece} " for piece in found]


def test_no_shape_detector_matches_where_the_token_check_says_none_can() -> None:
    for _kind, pattern, _group in TOKENS:
        for text in _pieces(pattern):
            if pattern.search(text):
                assert could_hold_token(text), (pattern.pattern, text)


def test_the_token_check_skips_an_ordinary_query() -> None:
    assert not could_hold_token("why does the export job keep failing (ticket 123456)")
    assert could_hold_token("see xapp-1-A-1-a")


def test_no_pair_matches_where_the_pair_check_says_none_can() -> None:
    folded = [text.replace("s", "\u017f").replace("k", "\u212a") for text in TEXTS]
    for text in _pieces(context._PAIR) + folded:
        if context._PAIR.search(text):
            assert context.could_hold_pair(text), text


def test_the_pair_check_keeps_non_ascii_text_that_folds_onto_a_secret_word() -> None:
    text = "pa\u017fsword=hunter2!"  # long s (U+017F) is `s` under (?i), but not after lower()
    assert context._PAIR.search(text) and context.could_hold_pair(text)
    assert redact(text).findings


def test_the_pair_check_skips_text_without_a_separator_or_a_secret_word() -> None:
    assert not context.could_hold_pair("why does the export job keep failing (ticket 123456)")
    assert not context.could_hold_pair("error: connection refused at db.internal:5432")
    assert context.could_hold_pair("DB_PASSWORD=hunter2")
