"""`manage.py bench_embedding`: the bare model's best throughput and the service's, end to end, in one run."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.bench.embedding import bare_best, bare_rate, bench_sessions, passages, service_rate
from apps.bench.evaluation.locomo import DEFAULT_PATH


class Command(BaseCommand):
    help = (
        "Passage-embedding throughput on LoCoMo's turns: the bare model at its best setting (model threads, "
        "concurrent calls, batch size; each in its own process) and the service end to end (scripts/serve, "
        "bulk load through the API until /api/v1/status/ reports nothing pending), in one run. --json PATH "
        'writes {"bare_items_per_s", "service_items_per_s", "items", ...}.'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", type=Path, default=DEFAULT_PATH, help="LoCoMo development set (JSON)")
        parser.add_argument("--items", type=int, default=3000, help="about this many turns (whole samples)")
        parser.add_argument(
            "--workers", type=int, default=len(os.sched_getaffinity(0)), help="server workers (make run: one per CPU)"
        )
        parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
        parser.add_argument("--child", action="store_true", help="internal: one bare setting, in this process")
        parser.add_argument("--calls", type=int, default=1, help="internal: concurrent calls of the child")
        parser.add_argument("--batch", type=int, default=32, help="internal: batch size of the child")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["items"] < 1 or options["workers"] < 1:
            raise CommandError("--items and --workers must be >= 1")
        if not options["path"].exists():
            raise CommandError(f"no LoCoMo set at {options['path']}")
        sessions = bench_sessions(path=options["path"], items=options["items"])
        texts = passages(sessions)
        if options["child"]:
            rate = bare_rate(texts=texts, calls=options["calls"], batch=options["batch"])
            self.stdout.write(json.dumps({"items_per_s": rate}))
            return
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per status poll otherwise
        load_before = os.getloadavg()
        bare = bare_best(path=options["path"], items=options["items"])
        for row in bare:
            self.stdout.write(
                f"bare  threads {row['threads']} calls {row['calls']} batch {row['batch']:>3}: "
                f"{row['items_per_s']:.1f} items/s"
            )
        service, items, probe = service_rate(sessions=sessions, workers=options["workers"])
        best = max(row["items_per_s"] for row in bare)
        figures = {
            "bare_items_per_s": best,
            "service_items_per_s": round(service, 2),
            "items": items,
            "service_to_bare": round(service / best, 3),
            "bare": bare,
            "workers": options["workers"],
            "nice": settings.EMBEDDING_NICE,
            "context_during_load": probe.summary(),
            "load_average": {
                "before": [round(x, 2) for x in load_before],
                "after": [round(x, 2) for x in os.getloadavg()],
            },
        }
        self.stdout.write(
            f"{items} turns: bare best {best:.1f} items/s, service {service:.1f} items/s "
            f"({service / best:.2f} of bare); context during the load: {json.dumps(probe.summary())}; "
            f"load {figures['load_average']}"
        )
        if options["json"]:
            options["json"].write_text(json.dumps(figures, indent=2) + "\n")
