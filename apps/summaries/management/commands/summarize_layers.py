"""`manage.py summarize_layers`: run the summary sweep now (what Celery beat does every minute)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.layers.selectors import layers_list
from apps.summaries.services import layer_summarize, summarize_due_layers
from apps.workspaces.selectors import workspace_get_by_slug


class Command(BaseCommand):
    help = (
        "Summarize every layer whose time or change trigger is due (deepest first), in one workspace or all; "
        "--force regenerates every layer of the workspace whatever its triggers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="workspace slug (default: every workspace)")
        parser.add_argument("--force", action="store_true", help="regenerate every layer, even if unchanged")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = None
        if options["workspace"]:
            workspace = workspace_get_by_slug(slug=options["workspace"])
            if workspace is None:
                raise CommandError(f"no workspace {options['workspace']!r}")
        if options["force"]:
            if workspace is None:
                raise CommandError("--force needs --workspace")
            order = {"session": 0, "multi_session": 1, "project": 2, "team": 3, "org": 4, "company": 5}
            layers = sorted(layers_list(workspace=workspace), key=lambda layer: (order[layer.kind], layer.pk))
            results = [layer_summarize(layer=layer, force=True) for layer in layers]
        else:
            results = summarize_due_layers(workspace_id=workspace.pk if workspace else None)
        counts = Counter(r.status for r in results)
        self.stdout.write(
            f"{len(results)} layers: {counts['generated']} generated, {counts['skipped']} skipped, "
            f"{counts['degraded']} degraded"
        )
