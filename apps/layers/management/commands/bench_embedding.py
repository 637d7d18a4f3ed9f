"""`manage.py bench_embedding`: passage-embedding throughput per thread count and batch size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.layers.embedding_rate import embedding_rate, sample_passages


def _ints(value: str) -> list[int]:
    try:
        numbers = [int(part) for part in value.split(",") if part.strip()]
    except ValueError as exc:
        raise CommandError(f"expected comma-separated integers, got {value!r}") from exc
    if not numbers or min(numbers) < 1:
        raise CommandError(f"expected integers >= 1, got {value!r}")
    return numbers


class Command(BaseCommand):
    help = (
        "Embed --items short turns with the configured provider at each --batch size, once per --threads count "
        "(each count in its own process: the model's OpenMP threads are fixed when it loads); prints items/s "
        "and tokens/s. The background embedder uses EMBEDDING_BATCH_SIZE and the process's OMP_NUM_THREADS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--items", type=int, default=256)
        parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
        parser.add_argument("--batch", default="16,32,64,128", help="comma-separated batch sizes")
        parser.add_argument("--child", action="store_true", help="internal: measure in this process, print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["items"] < 1:
            raise CommandError("--items must be >= 1")
        batches = _ints(options["batch"])
        texts = sample_passages(count=options["items"])
        if options["child"]:
            rates = [embedding_rate(texts=texts, batch_size=b) for b in batches]
            self.stdout.write(json.dumps([[r.batch_size, r.items_per_s, r.tokens_per_s] for r in rates]))
            return
        self.stdout.write(
            f"{options['items']} turns, provider {settings.EMBEDDING_PROVIDER} ({settings.EMBEDDING_MODEL})"
        )
        self.stdout.write(f"{'threads':>7} {'batch':>5} {'items/s':>8} {'tokens/s':>9}")
        for threads in _ints(options["threads"]):
            env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
            done = subprocess.run(
                [sys.executable, "manage.py", "bench_embedding", "--child", "--items", str(options["items"]),
                 "--batch", options["batch"]],
                cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise CommandError(f"the {threads}-thread run failed:\n{done.stderr[-2000:]}")
            for batch, items_per_s, tokens_per_s in json.loads(done.stdout.strip().splitlines()[-1]):
                self.stdout.write(f"{threads:>7} {batch:>5} {items_per_s:>8.1f} {tokens_per_s:>9.0f}")
