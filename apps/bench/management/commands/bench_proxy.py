"""`manage.py bench_proxy`: the latency the LLM proxy adds over its upstream (issue 21's closing figures)."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.proxy import proxy_bench, quantiles, report_lines, stand_in_upstream
from apps.bench.server import http_server
from apps.core import background
from apps.layers.models import Item
from apps.layers.selectors import layers_list
from apps.layers.services import ItemInput, items_create
from apps.proxy.models import ProxyCall
from apps.proxy.services import upstream_set
from apps.workspaces.services import workspace_create

FACTS = [
    "Database backups are taken nightly at 02:00 UTC and kept for 35 days.",
    "Each backup job copies one shard to cold storage and checks its checksum.",
    "Builds are promoted from staging to production every Tuesday.",
]


class Command(BaseCommand):
    help = (
        "Start scripts/serve with one worker and a local stand-in for an OpenAI-compatible upstream, then time "
        "--calls chat completions sent to the upstream directly and as many through the proxy, alternating, whole "
        "and streamed; prints p50/p95 of the total time and of the time to the first byte, and of what the proxy "
        "adds. The bench workspace is deleted afterwards."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--calls", type=int, default=100, help="calls per path and mode")
        parser.add_argument("--pieces", type=int, default=5, help="pieces of a streamed answer")
        parser.add_argument("--gap", type=float, default=0.02, help="seconds between two streamed pieces")
        parser.add_argument("--port", type=int, help="the server's port (default: a free one)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["calls"] < 5 or options["pieces"] < 1 or options["gap"] < 0:
            raise CommandError("--calls must be >= 5, --pieces >= 1, --gap >= 0")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per call otherwise
        workspace, key = workspace_create(slug=f"bench-proxy-{int(time.time())}")
        try:
            root = layers_list(workspace=workspace, kind="company").get()
            items_create(layer=root, items=[ItemInput(kind="memory", type="fact", content=f) for f in FACTS])
            background.wait_idle(120)
            with stand_in_upstream(pieces=options["pieces"], gap=options["gap"]) as upstream:
                upstream_set(workspace=workspace, kind="openai", base_url=upstream)
                with http_server(workers=1, port=options["port"]) as (base, _):
                    for stream in (False, True):
                        timings = proxy_bench(
                            base=base, key=key.secret, upstream=upstream, calls=options["calls"], stream=stream
                        )
                        for line in report_lines("streamed" if stream else "whole", timings):
                            self.stdout.write(line)
            calls = ProxyCall.objects.filter(workspace=workspace)
            prepare = quantiles(list(calls.values_list("prepare_ms", flat=True)))
            upstream_first = quantiles([v or 0.0 for v in calls.values_list("first_byte_ms", flat=True)])
            self.stdout.write(
                f"inside the proxy ({calls.count()} calls): storing and assembling p50 {prepare[0]:.1f} ms "
                f"p95 {prepare[1]:.1f} ms; upstream's headers after sending p50 {upstream_first[0]:.1f} ms "
                f"p95 {upstream_first[1]:.1f} ms"
            )
        finally:
            background.wait_idle(120)
            Item.objects.filter(workspace=workspace).only("pk", "workspace_id").delete()
            workspace.delete()
