"""`manage.py bench_summaries`: extractive summarization throughput (layers/s) and time per depth."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.summaries import bench_delete, bench_run, bench_seed


class Command(BaseCommand):
    help = (
        "Seed a throwaway workspace of --layers layers with --items items each, then time the extractive "
        "summarizer per depth and the whole summary service per layer. The workspace is deleted afterwards."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--layers", type=int, default=50)
        parser.add_argument("--items", type=int, default=100, help="items per layer")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["layers"] < 1 or options["items"] < 1:
            raise CommandError("--layers and --items must be >= 1")
        seeded = bench_seed(layers=options["layers"], items=options["items"])
        self.stdout.write(f"seeded {len(seeded.layers)} layers x {options['items']} items")
        try:
            bench_run(seeded=seeded, write=self.stdout.write)
        finally:
            bench_delete(seeded=seeded)
