"""`manage.py bench_assembly`: p50/p95/p99 and throughput of context assembly, in-process and over HTTP."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.assembly import MODES, BenchOptions, bench_delete, bench_paths, bench_reuse, bench_seed
from apps.bench.assembly.corpus import request_bodies
from apps.bench.assembly.keyword_check import keyword_check
from apps.bench.assembly.recall_curve import ef_search_curve
from apps.bench.assembly.run import BenchResult, sizes_table
from apps.bench.assembly.scope_recall import scope_recall_curve, scope_vectors, scopes
from apps.bench.assembly.seed import Seeded
from apps.bench.assembly.tracing_cost import off_path_ns, tracing_cost


class Command(BaseCommand):
    help = (
        "Seed a synthetic workspace of --items items, then time --queries assemblies per mode in-process and "
        "over HTTP with --concurrency clients (--server starts scripts/serve with --workers processes; --url uses a "
        "server on this database). "
        "The workspace is deleted afterwards unless --keep."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=10_000)
        parser.add_argument(
            "--sizes",
            metavar="LIST",
            help="comma-separated item counts (e.g. 100000,1000000): a run at each, seeded and deleted in turn, "
            "then one table of all of them (instead of --items)",
        )
        parser.add_argument("--queries", type=int, default=200, help="timed requests per mode and path")
        parser.add_argument("--concurrency", type=int, default=8, help="HTTP client threads")
        parser.add_argument("--budget", type=int, default=4000)
        parser.add_argument("--url", help="base URL of a running server that uses this database")
        parser.add_argument("--server", action="store_true", help="start scripts/serve on a free port")
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="server processes with --server")
        parser.add_argument("--mode", choices=[*MODES, "all"], default="all")
        parser.add_argument("--keep", action="store_true", help="keep the bench workspace")
        parser.add_argument(
            "--reuse",
            metavar="SLUG",
            help="time a workspace kept by an earlier --keep run (kept again); comma-separated slugs: a run at each, "
            "then one table of all of them",
        )
        parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
        parser.add_argument(
            "--ef-search-curve",
            metavar="LIST",
            help="comma-separated hnsw.ef_search values: print recall@RETRIEVAL_CANDIDATES against exact search "
            "and the search latency for each (on the seeded or reused workspace), instead of the timings",
        )
        parser.add_argument(
            "--scope-curve",
            metavar="SIZES",
            help="comma-separated scope sizes (items): print recall@RETRIEVAL_CANDIDATES against exact search and "
            "the search latency of each strategy at scopes of those sizes and at the whole workspace of --items, "
            "instead of the timings; one workspace per --vectors set, seeded and deleted in turn",
        )
        parser.add_argument(
            "--vectors",
            default="bench",
            help="with --scope-curve, comma-separated: bench (the bench's passages and questions) and/or locomo "
            "(the LoCoMo development set's turns and questions, embedded once and kept under VAR_DIR)",
        )
        parser.add_argument(
            "--tracing-cost",
            type=int,
            metavar="ROUNDS",
            help="instead of the timings: ROUNDS rounds each of --queries in-process vector assemblies with "
            "OpenTelemetry tracing off and on (exporting over OTLP/HTTP to a local sink), alternating; "
            "CPU per assembly of each",
        )
        parser.add_argument(
            "--keyword-check",
            metavar="PATH",
            help="keyword search's ids for every bench question: written to PATH when it does not exist, else "
            "compared with it (how many are identical); nothing else is timed",
        )
        parser.add_argument(
            "--embedding-batch", type=int, default=64, help="batch size of the embedding-rate measurement; 0 skips it"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["items"] < 1 or options["queries"] < 2 or options["concurrency"] < 1 or options["workers"] < 1:
            raise CommandError("--items, --concurrency and --workers must be >= 1, --queries >= 2")
        if options["tracing_cost"] is not None and options["tracing_cost"] < 1:
            raise CommandError("--tracing-cost takes a number of rounds >= 1")
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
        if options["scope_curve"]:
            self._scope_curve(options["items"], options["scope_curve"], options["vectors"], options["queries"])
            return
        targets = self._workspaces(options)
        if len(targets) > 1 and (options["ef_search_curve"] or options["tracing_cost"] is not None):
            raise CommandError("--ef-search-curve and --tracing-cost take one workspace, not several")
        runs: list[tuple[Seeded, BenchResult]] = []
        for size_or_slug in targets:
            seeded = self._workspace(size_or_slug)
            keep = options["keep"] or isinstance(size_or_slug, str)
            try:
                if options["ef_search_curve"]:
                    self._curve(seeded, options["ef_search_curve"], options["queries"])
                    return
                if options["keyword_check"]:
                    self._keyword_check(seeded, Path(options["keyword_check"]))
                    continue
                if options["tracing_cost"] is not None:
                    self._tracing_cost(seeded, options["tracing_cost"], options["queries"], options["budget"])
                    return
                runs.append((seeded, bench_paths(seeded=seeded, options=options_, write=self.stdout.write)))
            finally:
                if keep:
                    self.stdout.write(f"kept workspace {seeded.workspace.slug}")
                else:
                    started = time.perf_counter()
                    bench_delete(seeded=seeded)
                    self.stdout.write(f"deleted the bench workspace in {time.perf_counter() - started:.1f}s")
        if len(runs) > 1:
            self.stdout.write("")
            for line in sizes_table(runs=[(seeded.items, result) for seeded, result in runs], options=options_):
                self.stdout.write(line)
        if options["json"]:
            figures = [result.json(items=seeded.items, concurrency=options_.concurrency) for seeded, result in runs]
            Path(options["json"]).write_text(json.dumps(figures[0] if len(figures) == 1 else figures, indent=2) + "\n")
            self.stdout.write(f"wrote {options['json']}")

    def _workspaces(self, options: dict[str, Any]) -> list[int | str]:
        """What to time, in order: kept workspaces' slugs (--reuse), else item counts (--sizes, else --items)."""
        if options["reuse"]:
            return [slug.strip() for slug in options["reuse"].split(",") if slug.strip()]
        if not options["sizes"]:
            return [options["items"]]
        try:
            sizes = [int(part) for part in options["sizes"].split(",") if part.strip()]
        except ValueError as exc:
            raise CommandError(f"--sizes takes comma-separated integers, got {options['sizes']!r}") from exc
        if not sizes or min(sizes) < 1:
            raise CommandError("--sizes takes item counts >= 1")
        return list[int | str](sizes)

    def _workspace(self, size_or_slug: int | str) -> Seeded:
        if isinstance(size_or_slug, int):
            return bench_seed(items=size_or_slug)
        try:
            return bench_reuse(slug=size_or_slug)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def _keyword_check(self, seeded: Seeded, path: Path) -> None:
        started = time.perf_counter()
        check = keyword_check(workspace_id=seeded.workspace.pk, path=path)
        took = f"{time.perf_counter() - started:.1f} s, load {os.getloadavg()[0]:.2f}"
        if check.saved:
            self.stdout.write(
                f"{seeded.items:,} items: keyword ids of {check.questions} questions written to {path} ({took})"
            )
        else:
            self.stdout.write(
                f"{seeded.items:,} items: keyword ids identical to {path} for {check.identical} of {check.questions} "
                f"questions, the same set for {check.same_set} ({took})"
            )

    def _curve(self, seeded: Seeded, values: str, queries: int) -> None:
        try:
            efs = sorted({int(part) for part in values.split(",") if part.strip()})
        except ValueError as exc:
            raise CommandError(f"--ef-search-curve takes comma-separated integers, got {values!r}") from exc
        if not efs or efs[0] < 1 or efs[-1] > 1000:
            raise CommandError("--ef-search-curve values must be within 1-1000")
        k = settings.RETRIEVAL_CANDIDATES
        bodies = request_bodies(layer_id=seeded.layer_id, mode="vector", tickets=list(range(queries)), budget=1)
        vectors = [np.asarray(body["query_vector"], dtype=np.float32) for body in bodies]
        self.stdout.write(f"{seeded.items:,} items, {queries} query vectors, recall@{k} against exact search")
        self.stdout.write(f"{'ef_search':>9} {'recall':>7} {'p50 ms':>7} {'p95 ms':>7}")
        for point in ef_search_curve(workspace_id=seeded.workspace.pk, vectors=vectors, efs=efs, k=k):
            self.stdout.write(f"{point.ef_search:>9} {point.recall:>7.3f} {point.p50_ms:>7.1f} {point.p95_ms:>7.1f}")

    def _scope_curve(self, items: int, values: str, sets: str, queries: int) -> None:
        try:
            sizes = sorted({int(part) for part in values.split(",") if part.strip()})
        except ValueError as exc:
            raise CommandError(f"--scope-curve takes comma-separated integers, got {values!r}") from exc
        names = [part.strip() for part in sets.split(",") if part.strip()]
        if not sizes or sizes[0] < 1 or not names or not set(names) <= {"bench", "locomo"}:
            raise CommandError("--scope-curve takes sizes >= 1, --vectors bench and/or locomo")
        k = settings.RETRIEVAL_CANDIDATES
        for name in names:
            corpus, vectors = scope_vectors(name=name, queries=queries)
            started = time.perf_counter()
            seeded = bench_seed(items=items, corpus=corpus)
            self.stdout.write(
                f"\n{name} vectors: {items:,} items seeded in {time.perf_counter() - started:.0f} s, "
                f"{len(vectors)} query vectors, recall@{k} against exact search; load {os.getloadavg()[0]:.2f}"
            )
            try:
                scoped = scopes(workspace_id=seeded.workspace.pk, sizes=sizes)
                self.stdout.write(f"{'scope':>8} {'strategy':<22} {'recall':>7} {'p50 ms':>7} {'p95 ms':>7}")
                for point in scope_recall_curve(scoped=scoped, vectors=vectors, k=k):
                    self.stdout.write(
                        f"{point.scope:>8,} {point.variant:<22} {point.recall:>7.3f} {point.p50_ms:>7.1f} "
                        f"{point.p95_ms:>7.1f}"
                    )
            finally:
                bench_delete(seeded=seeded)
        self.stdout.write(f"load after: {os.getloadavg()[0]:.2f}")

    def _tracing_cost(self, seeded: Seeded, rounds: int, per_round: int, budget: int) -> None:
        tickets = iter(random.Random().sample(range(100_000, 1_000_000), 2 * (rounds + 1) * per_round))

        def bodies(n: int) -> list[dict[str, Any]]:
            chunk = [next(tickets) for _ in range(n)]
            return request_bodies(layer_id=seeded.layer_id, mode="vector", tickets=chunk, budget=budget)

        self.stdout.write(
            f"{seeded.items:,} items, budget {budget}: {rounds} rounds of {per_round} in-process vector assemblies "
            "with tracing off and on, alternating (after one uncounted round of each)"
        )
        self.stdout.write(f"tracing off, its code's cost: {off_path_ns():.0f} ns per assembly (one check per span)")
        costs, sink = tracing_cost(seeded=seeded, rounds=rounds, bodies=bodies, per_round=per_round)
        for cost in costs:
            rounds_ms = " ".join("-" if ms is None else f"{ms:.2f}" for ms in cost.round_cpu_ms)
            cpu = "-" if cost.cpu_ms is None else f"{cost.cpu_ms:.2f}"
            self.stdout.write(
                f"tracing {cost.state:>3}: {cost.requests} assemblies, cpu {cpu} ms per assembly "
                f"(rounds: {rounds_ms}), p50 {cost.p50_ms:.2f} ms"
            )
        off, on = costs
        if off.cpu_ms and on.cpu_ms:
            extra = on.cpu_ms - off.cpu_ms
            self.stdout.write(f"on - off: {extra:+.2f} ms cpu per assembly ({extra / off.cpu_ms:+.1%})")
        self.stdout.write(f"exported: {sink.requests} OTLP requests, {sink.bytes / 1024:.0f} KiB")
