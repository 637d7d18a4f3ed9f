"""`manage.py eval_locomo`: evidence recall on the LoCoMo development set, beside same-run baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.assembly.evaluation.locomo.data import LocomoError, locomo_load
from apps.assembly.evaluation.locomo.load import LoadError, locomo_reuse, locomo_write
from apps.assembly.evaluation.locomo.report import report_json, report_lines
from apps.assembly.evaluation.locomo.run import BUDGETS, TIMEOUT_MS, locomo_ask
from apps.core import background
from apps.core.progress import command_stream

DEFAULT_PATH = Path(settings.BASE_DIR).parent / "shared" / "locomo-dev" / "locomo_dev.json"


def _budgets(value: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError as exc:
        raise CommandError(f"--budgets must be comma-separated integers, got {value!r}") from exc
    if not budgets or min(budgets) < 1:
        raise CommandError("--budgets needs at least one positive budget")
    return budgets


class Command(BaseCommand):
    help = (
        "Evidence recall on the LoCoMo development set at several budgets, with BM25, dense and fused "
        "baselines on the same turns (a fresh workspace, deleted unless --keep; --reuse SLUG skips loading)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", type=Path, default=DEFAULT_PATH, help="the LoCoMo JSON file")
        parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
        parser.add_argument("--keep", action="store_true", help="keep the loaded workspace (its slug is printed)")
        parser.add_argument("--reuse", metavar="SLUG", help="ask in a workspace kept by an earlier --keep run")
        parser.add_argument("--limit", type=int, help="only the first N scored questions of each sample")
        parser.add_argument(
            "--timeout-ms",
            type=int,
            default=TIMEOUT_MS,
            help=f"each question's deadline, the request's timeout_ms (default {TIMEOUT_MS}; 0: none); answers "
            "that still came back partial are counted",
        )
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--details", action="store_true", help="with --json: every answer, with its misses")

    def _progress(self, message: str) -> None:
        self.stderr.write(message)
        self.stderr.flush()

    def handle(self, *args: Any, **options: Any) -> None:
        budgets = _budgets(options["budgets"])
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        if options["timeout_ms"] < 0:
            raise CommandError("--timeout-ms must be 0 (no deadline) or more")
        try:
            dataset = locomo_load(path=options["path"])
            if options["reuse"]:
                loaded = locomo_reuse(
                    dataset=dataset, slug=options["reuse"], progress=self._progress, stream=command_stream(self.stderr)
                )
            else:
                loaded = locomo_write(dataset=dataset, progress=self._progress, stream=command_stream(self.stderr))
        except (LocomoError, LoadError) as exc:
            raise CommandError(str(exc)) from exc
        try:
            run = locomo_ask(
                dataset=dataset,
                loaded=loaded,
                budgets=budgets,
                progress=self._progress,
                limit=options["limit"],
                timeout_ms=options["timeout_ms"],
            )
        finally:
            if not (options["keep"] or loaded.reused):
                background.wait_idle(60)
                loaded.workspace.delete()
        if options["json"]:
            self.stdout.write(json.dumps(report_json(run, details=options["details"]), indent=1))
        else:
            self.stdout.write("\n".join(report_lines(run)))
        if options["keep"] and not loaded.reused:
            self._progress(f"kept workspace {loaded.workspace.slug} (ask again with --reuse {loaded.workspace.slug})")
