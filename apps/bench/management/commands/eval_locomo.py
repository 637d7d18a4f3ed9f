"""`manage.py eval_locomo`: evidence recall on the LoCoMo development set, beside same-run baselines."""

from __future__ import annotations

from pathlib import Path

from apps.bench.evaluation.command import EvalCommand
from apps.bench.evaluation.data import Dataset
from apps.bench.evaluation.locomo import DEFAULT_PATH, locomo_load


class Command(EvalCommand):
    help = (
        "Evidence recall on the LoCoMo development set at several budgets, with BM25, dense, fused and recency "
        "baselines on the same turns (a fresh workspace, deleted unless --keep; --reuse SLUG skips loading)."
    )
    default_path = DEFAULT_PATH

    def read(self, path: Path) -> Dataset:
        return locomo_load(path=path)
