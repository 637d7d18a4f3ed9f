"""The redaction corpus: every secret redacted, every benign error message left exactly as it was.

secrets.json holds error messages and configs with secrets in varied formats and contexts (each
case lists the secret values that must not survive); benign.json holds real-looking error
messages with UUIDs, commit hashes, paths, versions, ids and digests that must come out unchanged.
The figures are printed (pytest -s) and asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.redaction.redactor import redact

HERE = Path(__file__).parent
SECRETS = json.loads((HERE / "secrets.json").read_text())
BENIGN = json.loads((HERE / "benign.json").read_text())


def corpus_figures() -> dict[str, float]:
    """Recall over secrets, benign messages unchanged, and finding-level precision over both sets."""
    secrets = caught = 0
    true_findings = all_findings = 0
    for case in SECRETS:
        result = redact(case["text"])
        for secret in case["secrets"]:
            secrets += 1
            caught += secret not in result.text
        for finding in result.findings:
            all_findings += 1
            span = case["text"][finding.start : finding.end]
            true_findings += any(span in s or s in span or _overlaps(case["text"], s, finding) for s in case["secrets"])
    unchanged = 0
    for case in BENIGN:
        result = redact(case["text"])
        unchanged += result.text == case["text"]
        all_findings += len(result.findings)
    return {
        "secrets": secrets,
        "recall": caught / secrets,
        "benign": len(BENIGN),
        "benign_unchanged": unchanged / len(BENIGN),
        "finding_precision": true_findings / all_findings if all_findings else 1.0,
    }


def _overlaps(text: str, secret: str, finding: object) -> bool:
    start = text.find(secret)
    return start >= 0 and start < finding.end and finding.start < start + len(secret)  # type: ignore[attr-defined]


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


def test_it_reports_precision_and_recall() -> None:
    figures = corpus_figures()
    print(f"\nredaction corpus: {json.dumps(figures)}")
    assert figures["recall"] == 1.0
    assert figures["benign_unchanged"] == 1.0
    assert figures["finding_precision"] >= 0.95


@pytest.mark.parametrize(
    "text",
    ["a." * 10_000, "1-" * 10_000, "a_" * 10_000, "password=" * 2_000, "x-api-key: " * 2_000, "a@" * 10_000],
)
def test_pathological_input_stays_fast(text: str) -> None:
    import time

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0
