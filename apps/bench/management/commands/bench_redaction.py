"""`manage.py bench_redaction`: the worst time of every regex that sees user text, at 10k/50k/200k."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.regex_cost import SIZES, describe, patterns, time_call, time_scan, worst_case


def _surfaces() -> list[tuple[str, Callable[[str], object]]]:
    """What the endpoints run on a text: the whole redactor, each finder, the error signature."""
    from apps.error_patterns.signature import error_signature
    from apps.redaction.redactor import FINDERS, TOKENS, redact
    from apps.redaction.tokens import token_matches

    def shape_detectors(text: str) -> None:
        for _, pattern, _ in TOKENS:
            for _ in token_matches(pattern, text):
                pass

    return [
        ("redact", redact),
        ("shape detectors (tokens.py)", shape_detectors),
        *((f"finder {finder.__name__}", finder) for finder in FINDERS),
        ("error_signature", error_signature),
    ]


class Command(BaseCommand):
    help = (
        "Time every regular expression that sees user text (and the redactor, its finders and the error "
        "signature as a whole) on hostile inputs: one short unit repeated to each size. Prints the worst "
        "unit's milliseconds per size; a size whose quadratic estimate passes --max-seconds is not run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated sizes")
        parser.add_argument("--only", default="", help="only names containing this")
        parser.add_argument("--max-seconds", type=float, default=5.0)
        parser.add_argument("--min-ms", type=float, default=0.0, help="print only rows whose largest size costs more")
        parser.add_argument("--surfaces-only", action="store_true", help="skip the per-pattern rows")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            sizes = tuple(sorted(int(s) for s in options["sizes"].split(",")))
        except ValueError as exc:
            raise CommandError("--sizes takes comma-separated integers") from exc
        if not sizes or sizes[0] < 1:
            raise CommandError("--sizes must be positive")
        labels = (f"{s // 1000}k ms" if s % 1000 == 0 else f"{s} ms" for s in sizes)
        self.stdout.write(f"{'what':55s} " + " ".join(f"{label:>9s}" for label in labels))
        rows = [(name, functools.partial(time_call, function)) for name, function in _surfaces()]
        if not options["surfaces_only"]:
            rows += [(p.name, functools.partial(time_scan, p.compiled)) for p in patterns()]
        for name, measure in rows:
            if options["only"] and options["only"] not in name:
                continue
            worst = worst_case(measure, sizes=sizes, max_seconds=options["max_seconds"])
            largest = worst.seconds[sizes[-1]]
            if largest is not None and largest * 1000 < options["min_ms"]:
                continue
            self.stdout.write(f"{name[:55]:55s} {describe(worst)}")
