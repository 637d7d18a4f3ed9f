"""`manage.py bench_context`: p50/p95/p99 latency and throughput of context assembly."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.assembly.benchmark import bench_load, bench_run, summarize


class Command(BaseCommand):
    help = "Benchmark context assembly on a synthetic workspace (deleted afterwards unless --keep)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument("--requests", type=int, default=200)
        parser.add_argument("--budget", type=int, default=4000)
        parser.add_argument("--keep", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace, layer, load_seconds = bench_load(items=options["items"])
        try:
            bench_run(workspace=workspace, layer=layer, requests=5, budget=options["budget"])  # warm-up
            samples = bench_run(
                workspace=workspace, layer=layer, requests=options["requests"], budget=options["budget"]
            )
            r = summarize(items=options["items"], load_seconds=load_seconds, samples=samples)
            self.stdout.write(
                f"items={r.items} load={r.load_seconds:.1f}s requests={r.requests} budget={options['budget']}\n"
                f"latency p50={r.p50_ms:.1f}ms p95={r.p95_ms:.1f}ms p99={r.p99_ms:.1f}ms "
                f"throughput={r.throughput_rps:.1f} req/s (one process, sequential) mean_tokens={r.mean_tokens:.0f}"
            )
        finally:
            if not options["keep"]:
                workspace.delete()
