"""`manage.py eval_retrieval`: evidence recall on the hand-written retrieval set, beside same-run baselines."""

from __future__ import annotations

from pathlib import Path

from apps.bench.evaluation.command import EvalCommand
from apps.bench.evaluation.data import Dataset
from apps.bench.evaluation.handwritten import DEFAULT_PATH, handwritten_load


class Command(EvalCommand):
    help = (
        "Evidence recall at several token budgets on the hand-written retrieval set, with BM25, dense, fused and "
        "recency baselines on the same turns (a fresh workspace, deleted unless --keep; --reuse SLUG skips loading)."
    )
    path_flag = "--dataset"
    default_path = DEFAULT_PATH

    def read(self, path: Path) -> Dataset:
        return handwritten_load(path=path)
