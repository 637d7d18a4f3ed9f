"""`manage.py redaction_eval` on the redaction corpus (tests/redaction/): recall over the secrets,
benign messages left unchanged and finding precision, printed (pytest -s) and asserted."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from apps.bench.redaction import figures, load

CORPUS = Path(__file__).resolve().parents[1] / "redaction"


def test_it_reports_precision_and_recall() -> None:
    result = figures(*load(CORPUS))
    print(f"\nredaction corpus: {json.dumps({k: v for k, v in result.items() if k not in ('missed', 'changed')})}")
    assert result["recall"] == 1.0, result["missed"]
    assert result["benign_unchanged"] == 1.0, result["changed"]
    assert result["finding_precision"] >= 0.95


def test_the_command_prints_the_figures() -> None:
    out = StringIO()
    call_command("redaction_eval", "--corpus", str(CORPUS), stdout=out)
    assert "recall 1.0000" in out.getvalue() and "unchanged 1.0000" in out.getvalue()
