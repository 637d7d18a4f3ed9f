"""Precision and recall of the redactor on a corpus: secret cases and benign messages (JSON).

`secrets.json`: [{"text": ..., "secrets": [values that must not survive], "kind": ...}];
`benign.json`: [{"text": ...}] that must come out unchanged. Used by the corpus test and by
`manage.py redaction_eval --corpus DIR` (any held-out corpus in the same shape).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apps.redaction.redactor import redact
from apps.redaction.spans import Span


def load(directory: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (
        json.loads((directory / "secrets.json").read_text()),
        json.loads((directory / "benign.json").read_text()),
    )


def _covers(text: str, secret: str, finding: Span) -> bool:
    start = text.find(secret)
    return start >= 0 and start < finding.end and finding.start < start + len(secret)


def figures(secret_cases: list[dict[str, Any]], benign_cases: list[dict[str, Any]]) -> dict[str, Any]:
    """recall: listed secrets that do not survive; benign_unchanged: benign texts left as they were;
    finding_precision: findings that cover a listed secret, over all findings in both sets."""
    secrets = caught = true_findings = all_findings = 0
    missed: list[str] = []
    for case in secret_cases:
        result = redact(case["text"])
        for secret in case["secrets"]:
            secrets += 1
            if secret in result.text:
                missed.append(f"{case.get('kind', '')}: {secret[:40]}")
            else:
                caught += 1
        for finding in result.findings:
            all_findings += 1
            true_findings += any(_covers(case["text"], s, finding) for s in case["secrets"])
    changed: list[str] = []
    for case in benign_cases:
        result = redact(case["text"])
        all_findings += len(result.findings)
        if result.text != case["text"]:
            changed.append(case["text"][:80])
    return {
        "secret_cases": len(secret_cases),
        "secrets": secrets,
        "recall": round(caught / secrets, 4) if secrets else 1.0,
        "benign": len(benign_cases),
        "benign_unchanged": round(1 - len(changed) / len(benign_cases), 4) if benign_cases else 1.0,
        "finding_precision": round(true_findings / all_findings, 4) if all_findings else 1.0,
        "missed": missed,
        "changed": changed,
    }
