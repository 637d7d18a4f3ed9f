"""`manage.py create_api_key <slug> --scopes read,write,admin`: a key for an existing workspace.

This is how an operator gets the first `admin` key (the demo key and the key from
`create_workspace` are read+write only); an admin key can then mint others over the API.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import DomainError
from apps.workspaces.models import Workspace
from apps.workspaces.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a workspace with the given scopes; the key is printed alone on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The workspace's slug.")
        parser.add_argument("--name", default="admin", help="Name of the key (default: admin).")
        parser.add_argument(
            "--scopes", default="read,write,admin", help="Comma-separated: read, write, admin (default: all three)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["slug"]).first()
        if workspace is None:
            raise CommandError(f"no workspace {options['slug']!r}")
        scopes = [scope.strip() for scope in options["scopes"].split(",") if scope.strip()]
        try:
            key = api_key_create(workspace=workspace, name=options["name"], scopes=scopes)
        except DomainError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        scopes_text = ",".join(key.api_key.scopes)
        self.stdout.write(f"API key {key.api_key.name!r} for {workspace.slug!r} with scopes {scopes_text}; shown once:")
        self.stdout.write(key.secret)
