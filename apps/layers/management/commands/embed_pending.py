"""`manage.py embed_pending`: embed every item still waiting for its embedding, now, in this process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import DomainError
from apps.layers.embedder import items_embed_pending
from apps.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Embed every item that has no embedding yet (all workspaces, or one with --workspace)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", default=None, help="Slug of the only workspace to embed.")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace_id = None
        if options["workspace"]:
            workspace = Workspace.objects.filter(slug=options["workspace"]).first()
            if workspace is None:
                raise CommandError(f"workspace {options['workspace']!r} not found")
            workspace_id = workspace.pk
        try:
            count = items_embed_pending(workspace_id=workspace_id)
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        self.stdout.write(f"Embedded {count} item(s).")
