"""The one evaluation command behind `eval_retrieval` and `eval_locomo`: read a set, write it into a
fresh workspace (or `--reuse` one kept earlier), ask every question, print the report.

Each command names its set's file argument and how to read it; the flags are the same for both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.evaluation.ask import BUDGETS, SCOPES, TIMEOUT_MS, AskError, dataset_ask
from apps.bench.evaluation.data import Dataset, DatasetError
from apps.bench.evaluation.load import LoadError, dataset_reuse, dataset_write
from apps.bench.evaluation.report import report_json, report_lines
from apps.core import background
from apps.core.progress import command_stream


def budgets_parse(value: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError as exc:
        raise CommandError(f"--budgets must be comma-separated integers, got {value!r}") from exc
    if not budgets or min(budgets) < 1:
        raise CommandError("--budgets needs at least one positive budget")
    return budgets


class EvalCommand(BaseCommand):
    """Subclasses set `path_flag`, `default_path` and `read` (the file → a Dataset)."""

    path_flag = "--path"
    default_path: Path

    def read(self, path: Path) -> Dataset:
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(self.path_flag, dest="path", type=Path, default=self.default_path, help="the set's file")
        parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
        parser.add_argument(
            "--scope",
            choices=SCOPES,
            default="conversation",
            help="ask at the question's conversation (default) or at the root, with every conversation in scope",
        )
        parser.add_argument("--keep", action="store_true", help="keep the loaded workspace (its slug is printed)")
        parser.add_argument("--reuse", metavar="SLUG", help="ask in a workspace kept by an earlier --keep run")
        parser.add_argument("--limit", type=int, help="only the first N questions of each conversation")
        parser.add_argument(
            "--timeout-ms",
            type=int,
            default=TIMEOUT_MS,
            help=f"each question's deadline, the request's timeout_ms (default {TIMEOUT_MS}; 0: none); answers "
            "that still came back partial are counted",
        )
        parser.add_argument("--misses", action="store_true", help="list the evidence turns missed per answer")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--details", action="store_true", help="with --json: every answer, with its misses")

    def _progress(self, message: str) -> None:
        self.stderr.write(message)
        self.stderr.flush()

    def handle(self, *args: Any, **options: Any) -> None:
        budgets = budgets_parse(options["budgets"])
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        if options["timeout_ms"] < 0:
            raise CommandError("--timeout-ms must be 0 (no deadline) or more")
        stream = command_stream(self.stderr)
        try:
            dataset = self.read(options["path"])
            if options["reuse"]:
                loaded = dataset_reuse(dataset=dataset, slug=options["reuse"], progress=self._progress, stream=stream)
            else:
                loaded = dataset_write(dataset=dataset, progress=self._progress, stream=stream)
        except (DatasetError, LoadError) as exc:
            raise CommandError(str(exc)) from exc
        try:
            run = dataset_ask(
                dataset=dataset,
                loaded=loaded,
                budgets=budgets,
                progress=self._progress,
                scope=options["scope"],
                limit=options["limit"],
                timeout_ms=options["timeout_ms"],
            )
        except AskError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if not (options["keep"] or loaded.reused):
                background.wait_idle(60)
                loaded.workspace.delete()
        if options["json"]:
            self.stdout.write(json.dumps(report_json(run, details=options["details"]), indent=1))
        else:
            self.stdout.write("\n".join(report_lines(run, misses=options["misses"])))
        if options["keep"] and not loaded.reused:
            self._progress(f"kept workspace {loaded.workspace.slug} (ask again with --reuse {loaded.workspace.slug})")
