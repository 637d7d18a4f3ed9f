"""The redaction corpus: every secret redacted, every benign error message left exactly as it was.

secrets.json holds error messages and configs with secrets in varied formats and contexts (each
case lists the secret values that must not survive); benign.json holds real-looking error
messages with UUIDs, commit hashes, paths, versions, ids and digests that must come out unchanged.
Precision and recall over the whole corpus: tests/bench/test_redaction_eval.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.redaction.redactor import redact

HERE = Path(__file__).parent
SECRETS = json.loads((HERE / "secrets.json").read_text())
BENIGN = json.loads((HERE / "benign.json").read_text())


def test_the_corpus_is_big_enough() -> None:
    assert len(SECRETS) >= 100 and sum(len(c["secrets"]) for c in SECRETS) >= 100
    assert len(BENIGN) >= 100


@pytest.mark.parametrize("case", SECRETS, ids=[f"{i}-{c['kind']}" for i, c in enumerate(SECRETS)])
def test_it_redacts_every_secret(case: dict[str, object]) -> None:
    redacted = redact(str(case["text"])).text
    for secret in case["secrets"]:  # type: ignore[attr-defined]
        assert secret not in redacted, redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize("case", BENIGN, ids=[str(i) for i in range(len(BENIGN))])
def test_it_leaves_benign_messages_unchanged(case: dict[str, str]) -> None:
    result = redact(case["text"])
    assert result.text == case["text"], [(f.type, case["text"][f.start : f.end]) for f in result.findings]


@pytest.mark.parametrize(
    "text",
    ["a." * 10_000, "1-" * 10_000, "a_" * 10_000, "password=" * 2_000, "x-api-key: " * 2_000, "a@" * 10_000],
)
def test_pathological_input_stays_fast(text: str) -> None:
    import time

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0
