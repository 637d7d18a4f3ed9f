"""On a PostgreSQL without the pgvector extension the service still migrates and answers by keyword.

The machine's own PostgreSQL (127.0.0.1:5432, no pgvector) plays that server; .ci/run starts it.
The whole service runs in a subprocess pointed at it with DATABASE_URL, as an operator would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = "postgresql://postgres@127.0.0.1:5432"

SCRIPT = r"""
import json
from apps.assembly.params import ContextParams
from apps.assembly.serializers import context_json
from apps.assembly.services import context_assemble
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create
from apps.layers.vectors import vector_available
from apps.workspaces.services import workspace_create

workspace, _ = workspace_create(slug="fallback")
root = Layer.objects.get(workspace=workspace, kind="company")
items_create(layer=root, items=[
    ItemInput(kind="memory", type="fact", content="Database backups are kept for 35 days."),
    ItemInput(kind="memory", type="fact", content="The office coffee machine is broken."),
])
from apps.core import background
background.wait_idle(120)
items_embed_pending(workspace_id=workspace.pk)
stored = Item.objects.filter(workspace=workspace, embedding__isnull=False).count()
result = context_assemble(workspace=workspace, params=ContextParams(
    layer_id=root.pk, query="how long are backups kept", token_budget=50, format="text"))
print(json.dumps({"vector": vector_available(), "embedded": stored, "result": context_json(result)}))
"""


def _server_without_pgvector() -> bool:
    try:
        with psycopg.connect(f"{SERVER}/postgres", connect_timeout=3) as conn:
            return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None
    except psycopg.OperationalError:
        return False


@pytest.mark.skipif(not _server_without_pgvector(), reason="needs a PostgreSQL without pgvector on 127.0.0.1:5432")
def test_it_falls_back_to_keyword_search_without_pgvector() -> None:
    name = f"ca_fallback_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env = dict(os.environ, DATABASE_URL=f"{SERVER}/{name}", DJANGO_SETTINGS_MODULE="contextarch.settings")
    env.pop("REDIS_URL", None)
    try:

        def manage(*args: str) -> str:
            done = subprocess.run(
                [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, done.stderr[-2000:]
            return done.stdout

        manage("migrate", "--no-input")
        out = json.loads(manage("shell", "-c", SCRIPT).strip().splitlines()[-1])
        assert out["vector"] is False
        assert out["embedded"] == 2  # vectors are still kept (as real[]) for when pgvector arrives
        result = out["result"]
        assert result["chunks"][0]["text"] == "Database backups are kept for 35 days."
        assert any("keyword search only" in w for w in result["warnings"])
        assert result["total_tokens"] <= 50
    finally:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
