"""`manage.py eval_retrieval`: evidence recall of context assembly on the hand-written retrieval set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.assembly.evaluation.dataset import DEFAULT_PATH, DatasetError, dataset_load
from apps.assembly.evaluation.report import report_lines
from apps.assembly.evaluation.runner import DEFAULT_BUDGETS, SCOPES, EvalError, evaluate


def _budgets(value: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError as exc:
        raise CommandError(f"--budgets must be comma-separated integers, got {value!r}") from exc
    if not budgets or min(budgets) < 1:
        raise CommandError("--budgets needs at least one positive budget")
    return budgets


class Command(BaseCommand):
    help = "Evidence recall at several token budgets on the retrieval set (a fresh workspace, deleted unless --keep)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--budgets", default=",".join(str(b) for b in DEFAULT_BUDGETS))
        parser.add_argument("--dataset", type=Path, default=DEFAULT_PATH)
        parser.add_argument(
            "--scope",
            choices=SCOPES,
            default="conversation",
            help="ask at the question's conversation (default) or at the root, with every conversation in scope",
        )
        parser.add_argument("--keep", action="store_true", help="keep the evaluation workspace")
        parser.add_argument("--misses", action="store_true", help="list the evidence turns missed per question")

    def handle(self, *args: Any, **options: Any) -> None:
        budgets = _budgets(options["budgets"])
        try:
            dataset = dataset_load(path=options["dataset"])
            run = evaluate(dataset=dataset, budgets=budgets, scope=options["scope"], keep=options["keep"])
        except (DatasetError, EvalError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n".join(report_lines(run, misses=options["misses"])))
        if options["keep"]:
            self.stdout.write(f"kept workspace {run.workspace_slug}")
