"""The cheap pre-checks that let a short query skip detectors must never skip one that would match.

Each check is compared with the regexes it stands for, over the corpus, every string in the
redaction tests, each match cut out on its own (the shortest text that still holds it), and
variants with the non-ASCII letters that `(?i)` folds onto ASCII ones.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

from apps.redaction import context, entries, named, pii
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


def _any_of(*literals: str) -> Callable[[str], bool]:
    return lambda text: any(literal in text for literal in literals)


_SEPARATED = _any_of(":", "=")
# Each skipped pattern and the literal test its finder runs first (context.py, named.py, pii.py).
LITERAL_CHECKS = [
    (context._XML, _any_of("</")),
    (context._AUTH, _SEPARATED),
    (context._AUTH_ANY_SCHEME, _SEPARATED),
    (context._HEADER, _any_of(":")),
    (context._URL_PASSWORD, _any_of("://")),
    (context._URL_TOKEN_USER, _any_of("://")),
    (context._QUERY, _any_of("=")),
    (context._SPOKEN, _any_of('"', "'", "`")),
    *((p, _any_of("-", "machine")) for p in (context._FLAG, context._MYSQL, context._SSHPASS, context._CURL_USER)),
    *((p, _any_of("-", "machine")) for p in (context._NETRC, context._REDIS_CLI)),
    (context._ORACLE, lambda text: "-" in text or ("/" in text and "@" in text)),
    (named._ASSIGN, _SEPARATED),
    (entries._NAME_THEN_VALUE, _SEPARATED),
    (entries._VALUE_THEN_NAME, _SEPARATED),
    *((p, _any_of("-")) for p in (named._LOGIN_P, named._SQL_P, named._HTPASSWD)),
    (pii._EMAIL, _any_of("@")),
    (pii._PHONE_INTL, _any_of("+")),
    (pii._PHONE_US, _any_of("-", ".")),
    (pii._PHONE_KEYED, _SEPARATED),
    (pii._SSN, _any_of("-")),
]


def test_no_pattern_matches_where_its_literal_check_says_none_can() -> None:
    for pattern, check in LITERAL_CHECKS:
        for text in _pieces(pattern):
            if pattern.search(text):
                assert check(text), (pattern.pattern, text)


def test_an_ordinary_query_runs_none_of_the_skipped_patterns() -> None:
    query = "why does the export job keep failing (ticket 123456)"
    assert not any(check(query) for _pattern, check in LITERAL_CHECKS)
