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

from apps.redaction.evaluation import figures
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


def test_it_reports_precision_and_recall() -> None:
    result = figures(SECRETS, BENIGN)
    print(f"\nredaction corpus: {json.dumps({k: v for k, v in result.items() if k not in ('missed', 'changed')})}")
    assert result["recall"] == 1.0, result["missed"]
    assert result["benign_unchanged"] == 1.0, result["changed"]
    assert result["finding_precision"] >= 0.95


def test_the_command_prints_the_figures() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("redaction_eval", "--corpus", str(HERE), stdout=out)
    assert "recall 1.0000" in out.getvalue() and "unchanged 1.0000" in out.getvalue()


@pytest.mark.parametrize(
    "text",
    ["a." * 10_000, "1-" * 10_000, "a_" * 10_000, "password=" * 2_000, "x-api-key: " * 2_000, "a@" * 10_000],
)
def test_pathological_input_stays_fast(text: str) -> None:
    import time

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 3.0
