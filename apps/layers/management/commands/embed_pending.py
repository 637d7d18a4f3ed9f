"""`manage.py embed_pending`: embed every item still waiting for its embedding, now, in this process."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import DomainError
from apps.core.progress import ProgressBar, command_stream
from apps.layers.embedder import items_embed_batch
from apps.layers.models import Item
from apps.workspaces.selectors import workspace_get_by_slug


class Command(BaseCommand):
    help = "Embed every item that has no embedding yet (all workspaces, or one with --workspace)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", default=None, help="Slug of the only workspace to embed.")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace_id = None
        if options["workspace"]:
            workspace = workspace_get_by_slug(slug=options["workspace"])
            if workspace is None:
                raise CommandError(f"workspace {options['workspace']!r} not found")
            workspace_id = workspace.pk
        waiting = Item.objects.filter(embedding__isnull=True)
        if workspace_id is not None:
            waiting = waiting.filter(workspace_id=workspace_id)
        bar = ProgressBar(total=waiting.count(), label="embedding", stream=command_stream(self.stderr))
        count = 0
        try:
            while done := items_embed_batch(workspace_id=workspace_id, batch_size=settings.EMBEDDING_BATCH_SIZE):
                count += done
                bar.update(count)
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        finally:
            bar.close()
        self.stdout.write(f"Embedded {count} item(s).")
