"""`manage.py bench_assembly`: p50/p95/p99 and throughput of context assembly, in-process and over HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.assembly.benchmark import MODES, BenchOptions, bench_delete, bench_paths, bench_reuse, bench_seed


class Command(BaseCommand):
    help = (
        "Seed a synthetic workspace of --items items, then time --queries assemblies per mode in-process and "
        "over HTTP with --concurrency clients (--server starts scripts/serve with --workers processes; --url uses a "
        "server on this database). "
        "The workspace is deleted afterwards unless --keep."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument("--queries", type=int, default=200, help="timed requests per mode and path")
        parser.add_argument("--concurrency", type=int, default=8, help="HTTP client threads")
        parser.add_argument("--budget", type=int, default=4000)
        parser.add_argument("--url", help="base URL of a running server that uses this database")
        parser.add_argument("--server", action="store_true", help="start scripts/serve on a free port")
        parser.add_argument("--workers", type=int, default=4, help="server processes with --server")
        parser.add_argument("--mode", choices=[*MODES, "all"], default="all")
        parser.add_argument("--keep", action="store_true", help="keep the bench workspace")
        parser.add_argument(
            "--reuse", metavar="SLUG", help="time a workspace kept by an earlier --keep run (kept again)"
        )
        parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
        parser.add_argument(
            "--embedding-batch", type=int, default=64, help="batch size of the embedding-rate measurement; 0 skips it"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["items"] < 1 or options["queries"] < 2 or options["concurrency"] < 1 or options["workers"] < 1:
            raise CommandError("--items, --concurrency and --workers must be >= 1, --queries >= 2")
        options_ = BenchOptions(
            modes=MODES if options["mode"] == "all" else (options["mode"],),
            queries=options["queries"],
            concurrency=options["concurrency"],
            budget=options["budget"],
            url=options["url"],
            server=options["server"],
            workers=options["workers"],
            embedding_batch=options["embedding_batch"],
        )
        if options["reuse"]:
            try:
                seeded = bench_reuse(slug=options["reuse"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            options["keep"] = True
        else:
            seeded = bench_seed(items=options["items"])
        try:
            result = bench_paths(seeded=seeded, options=options_, write=self.stdout.write)
            if options["json"]:
                figures = result.json(items=seeded.items, concurrency=options_.concurrency)
                Path(options["json"]).write_text(json.dumps(figures, indent=2) + "\n")
                self.stdout.write(f"wrote {options['json']}")
        finally:
            if options["keep"]:
                self.stdout.write(f"kept workspace {seeded.workspace.slug}")
            else:
                started = time.perf_counter()
                bench_delete(seeded=seeded)
                self.stdout.write(f"deleted the bench workspace in {time.perf_counter() - started:.1f}s")
