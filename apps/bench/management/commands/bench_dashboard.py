"""`manage.py bench_dashboard`: the dashboard's answer time over N assembly records, per range."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.dashboard import RANGES, bench_delete, bench_seed, dashboard_figures, page_client, raw_totals, timed

TARGET_MS = 300.0


class Command(BaseCommand):
    help = (
        "Seed --records assembly records over 30 days (one INSERT ... SELECT generate_series) in a throwaway "
        "workspace, roll them up, then time the dashboard per range: the figures (selector) and the whole page "
        "(GET /?range=..), beside the raw-record baseline. The workspace is deleted afterwards unless --keep."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--records", type=int, default=1_000_000)
        parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median and worst)")
        parser.add_argument("--keep", action="store_true", help="keep the bench workspace")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["records"] < 1 or options["repeat"] < 1:
            raise CommandError("--records and --repeat must be >= 1")
        seeded = bench_seed(records=options["records"])
        self.stdout.write(
            f"seeded {seeded.records:,} records in {seeded.seed_seconds:.1f} s; "
            f"rollup caught up in {seeded.rollup_seconds:.1f} s "
            f"({seeded.records / max(seeded.rollup_seconds, 1e-9):,.0f} records/s)"
        )
        try:
            client = page_client(workspace=seeded.workspace)
            self.stdout.write(
                f"{'range':>5}  {'figures p50/max ms':>20}  {'page p50/max ms':>18}  {'raw baseline ms':>16}  target"
            )
            workspace = seeded.workspace
            for key in RANGES:
                figures = timed(
                    partial(dashboard_figures, workspace=workspace, range_key=key), repeat=options["repeat"]
                )
                page = timed(partial(client.get, f"/?range={key}"), repeat=options["repeat"])
                raw = timed(partial(raw_totals, workspace=workspace, range_key=key), repeat=3)
                met = "met" if page[0] < TARGET_MS else "MISSED"
                self.stdout.write(
                    f"{key:>5}  {figures[0]:>9.1f} / {figures[1]:>7.1f}  {page[0]:>8.1f} / {page[1]:>7.1f}  "
                    f"{raw[0]:>16.1f}  < {TARGET_MS:.0f} ms {met} (x{raw[0] / max(figures[0], 1e-9):.1f} faster "
                    "than the raw totals alone)"
                )
        finally:
            if options["keep"]:
                self.stdout.write(f"kept workspace {seeded.workspace.slug}")
            else:
                bench_delete(workspace=seeded.workspace)
