"""`manage.py create_workspace <slug>`: a workspace, its company layer and an API key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import DomainError
from apps.workspaces.services import workspace_create


class Command(BaseCommand):
    help = "Create a workspace with its company layer and an API key; the key is printed alone on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Short name of the workspace: letters, digits, - and _.")
        parser.add_argument("--name", default="", help="Display name (defaults to the slug).")
        parser.add_argument("--key-name", default="default", help="Name of the first API key.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            workspace, key = workspace_create(slug=options["slug"], name=options["name"], key_name=options["key_name"])
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        self.stdout.write(f"Created workspace {workspace.slug!r} (id {workspace.pk}) with its company layer.")
        self.stdout.write(f"API key {key.api_key.name!r}; it is shown only once, store it now:")
        self.stdout.write(key.secret)
