"""manage.py redaction_eval [--corpus DIR]: the redactor's recall and precision on a corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps.bench.redaction import figures, load


class Command(BaseCommand):
    help = "Recall over secrets and precision over findings of the redactor on secrets.json + benign.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", default=str(Path(settings.BASE_DIR) / "tests" / "redaction"))
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        result = figures(*load(Path(options["corpus"])))
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=1))
            return
        self.stdout.write(
            f"secrets: {result['secrets']} in {result['secret_cases']} cases, recall {result['recall']:.4f}\n"
            f"benign: {result['benign']} messages, unchanged {result['benign_unchanged']:.4f}\n"
            f"finding precision: {result['finding_precision']:.4f}"
        )
        for line in result["missed"]:
            self.stdout.write(f"  missed {line}")
        for line in result["changed"]:
            self.stdout.write(f"  changed {line}")
