"""`manage.py bench_tenants`: a victim tenant's context latency while another tenant bursts (issue 26)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.assembly import bench_delete, bench_seed
from apps.bench.assembly.corpus import request_bodies
from apps.bench.server import http_server
from apps.bench.tenants import BURSTS, Tenant, report_lines, tenants_bench


class Command(BaseCommand):
    help = (
        "Seed two workspaces of --items items, start scripts/serve with --workers processes, and time one "
        "tenant's steady context requests alone and beside bursts of --bursts concurrent clients of the other; "
        "prints the victim's p50/p95 per phase, its p95 against its p95 alone, and errors by code. "
        "Both workspaces are deleted afterwards."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=2000, help="items per tenant")
        parser.add_argument("--seconds", type=float, default=15.0, help="length of each phase")
        parser.add_argument("--pace", type=float, default=0.1, help="seconds between the victim's requests")
        parser.add_argument("--bursts", default=",".join(map(str, BURSTS)), help="attacker clients per phase")
        parser.add_argument("--workers", type=int, default=2, help="server processes")
        parser.add_argument("--port", type=int, help="the server's port (default: a free one)")
        parser.add_argument("--mode", choices=("vector", "hybrid", "text"), default="hybrid")
        parser.add_argument("--budget", type=int, default=2000)
        parser.add_argument("--rude", action="store_true", help="attacker clients ignore Retry-After")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bursts = tuple(int(part) for part in options["bursts"].split(",") if part.strip())
        except ValueError as exc:
            raise CommandError(f"--bursts takes comma-separated integers, got {options['bursts']!r}") from exc
        if options["items"] < 1 or options["workers"] < 1 or options["seconds"] <= 0 or not bursts:
            raise CommandError("--items and --workers must be >= 1, --seconds > 0, --bursts not empty")
        if min(bursts) < 1:
            raise CommandError("every burst needs at least one client")
        pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool", {})
        self.stdout.write(
            f"{options['workers']} workers, pool max {pool.get('max_size', '-')} per worker, "
            f"workspace cap {getattr(settings, 'WORKSPACE_MAX_CONCURRENT', '-')} per worker, "
            f"worker cap {getattr(settings, 'WORKER_MAX_CONCURRENT', '-')}, "
            f"{options['mode']} requests, {options['items']} items per tenant, load {os.getloadavg()[0]:.1f}"
        )
        victim, attacker = bench_seed(items=options["items"], seed=7), bench_seed(items=options["items"], seed=8)
        try:
            mode, budget = options["mode"], options["budget"]
            tenants = [
                Tenant(s.secret, request_bodies(layer_id=s.layer_id, mode=mode, tickets=[*range(200)], budget=budget))
                for s in (victim, attacker)
            ]
            with http_server(workers=options["workers"], port=options["port"]) as (base, _):
                phases = tenants_bench(
                    url=base,
                    victim=tenants[0],
                    attacker=tenants[1],
                    bursts=bursts,
                    seconds=options["seconds"],
                    pace=options["pace"],
                    rude=options["rude"],
                    write=self.stdout.write,
                )
            self.stdout.write("")
            for line in report_lines(phases):
                self.stdout.write(line)
            self.stdout.write(f"load {os.getloadavg()[0]:.1f} at the end")
        finally:
            bench_delete(seeded=victim)
            bench_delete(seeded=attacker)
