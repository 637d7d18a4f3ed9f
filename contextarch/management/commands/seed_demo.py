"""`manage.py seed_demo`: the demo workspace and admin login (created once); prints where the
credentials are kept (var/demo_credentials.json, mode 0600), never the password or the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps.core import background
from apps.layers.selectors import items_pending_embedding_count
from apps.workspaces.selectors import workspace_get_by_slug
from contextarch.demo import demo_seed

EXAMPLE_REQUEST = '{"layer_external_id": "demo-session-0001", "query": "Why did retries storm?", "token_budget": 300}'


class Command(BaseCommand):
    help = "Create the demo workspace, its items and an admin login once; print the URL and where the credentials are."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="Where the service will answer.")
        parser.add_argument(
            "--credentials",
            type=Path,
            default=None,
            help="File keeping the demo's API key and password (default: var/demo_credentials.json).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["credentials"] or Path(settings.VAR_DIR) / "demo_credentials.json"
        result = demo_seed(credentials_path=path)
        background.wait_idle(300 if not result.embedding_error else 30)
        creds, url = result.credentials, options["url"].rstrip("/")
        state = "created" if result.created else "ready"
        # The state after the wait, not what this call embedded: a background worker embeds most items
        # as they are written ("embedded 26 items" in the log), so "(0 embedded now)" read as none were.
        workspace = workspace_get_by_slug(slug=creds.workspace)
        pending = items_pending_embedding_count(workspace=workspace) if workspace is not None else result.pending
        state_of_items = "all embedded" if not pending else f"{result.items - pending} embedded, {pending} waiting"
        self.stdout.write(
            f"Demo workspace {creds.workspace!r} {state}: {result.layers} layers, {result.items} items "
            f"({state_of_items}). Credentials kept in {path}."
        )
        if result.embedding_error:
            self.stdout.write(
                f"  Embeddings: {result.pending} items wait for the embedding provider ({result.embedding_error}); "
                "they are found by keyword until the background sweep embeds them."
            )
        # The password and the key stay in the 0600 file: printed, they would land in terminal logs.
        self.stdout.write(f"  URL:      {url}/")
        self.stdout.write(f'  Login:    {url}/login/ as {creds.username} (password: "password" in {path})')
        self.stdout.write(f'  API key:  {creds.api_key[:10]}… ("api_key" in {path}; read+write)')
        self.stdout.write(
            f'  Try:      KEY=$(python3 -c \'import json; print(json.load(open("{path}"))["api_key"])\'); '
            f'curl -s {url}/api/v1/context/ -H "Authorization: Bearer $KEY" '
            f"-H 'Content-Type: application/json' -d '{EXAMPLE_REQUEST}'"
        )
