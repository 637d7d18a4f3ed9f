"""Seeding the bench workspace: one project with many sessions, bulk-inserted with precomputed vectors.

The HNSW index is dropped before a large insert and rebuilt after it: one build takes ~20 s for
100k rows where filling the live index row by row takes minutes. The index covers every
workspace, so others in the same database search without it meanwhile: seed a benchmark database.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.assembly.benchmark.corpus import item_text, passages, unit_rows
from apps.core import embeddings, tokenizer
from apps.layers.models import Item, Layer
from apps.layers.services import content_hash, layer_create
from apps.layers.vectors import create_hnsw_index, drop_hnsw_index
from apps.workspaces.models import Workspace
from apps.workspaces.services import api_key_create, workspace_create

REBUILD_INDEX_FROM = 5_000  # below this many items, inserting into the live index is cheaper than a rebuild
SESSION_SIZE = 500  # items per session; ten sessions to a multi-session


@dataclass(frozen=True)
class Seeded:
    """A bench workspace: the project every request asks at, its API key, and where seeding spent its time."""

    workspace: Workspace
    layer_id: int
    secret: str
    items: int
    sessions: int
    phases: tuple[tuple[str, float], ...]  # (what, seconds) in order
    index_rebuilt: bool


def _layers(workspace: Workspace, sessions: int) -> tuple[Layer, Layer, list[Layer]]:
    """company → org → team → project → multi-sessions → sessions; returns the team, the project and the sessions."""
    root = Layer.objects.get(workspace=workspace, kind="company")
    org = layer_create(workspace=workspace, kind="org", name="engineering", parent=root)
    team = layer_create(workspace=workspace, kind="team", name="platform", parent=org)
    project = layer_create(workspace=workspace, kind="project", name="bench project", parent=team)
    groups = [
        layer_create(workspace=workspace, kind="multi_session", name=f"sprint {g}", parent=project)
        for g in range((sessions + 9) // 10)
    ]
    leaves = [
        layer_create(workspace=workspace, kind="session", name=f"session {i}", parent=groups[i // 10])
        for i in range(sessions)
    ]
    return team, project, leaves


def _kind_fields(i: int, session: Layer, team: Layer, project: Layer, text: str) -> dict[str, Any]:
    """Item `i`: mostly session messages and memories, 2% project specs (5 pinned), 1% team packages."""
    if i % 50 == 0:
        return {"layer": project, "kind": "spec", "type": "knowledge", "title": text[:60], "pinned": i < 250}
    if i % 97 == 1:
        return {"layer": team, "kind": "package", "type": "research", "priority": "high", "agent_types": ["coder"]}
    if i % 4 == 3:
        return {"layer": session, "kind": "memory", "type": "fact", "confidence": 0.5 + (i % 5) / 10}
    return {"layer": session, "kind": "message", "role": "user" if i % 2 else "assistant"}


def _rows(workspace: Workspace, items: int, vectors: np.ndarray, texts: list[str]) -> tuple[Layer, list[Item]]:
    """The layers, and the items to insert under them; returns the project too."""
    sessions = max(1, items // SESSION_SIZE)
    team, project, leaves = _layers(workspace, sessions)
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    now = timezone.now()
    rows = []
    for i in range(items):
        text = item_text(texts[i % len(texts)], i)
        fields = _kind_fields(i, leaves[i * sessions // items], team, project, text)  # sessions fill oldest first
        rows.append(
            Item(
                workspace=workspace,
                content=text,
                content_hash=content_hash(title=fields.get("title", ""), content=text),
                token_count=tokenizer.count_tokens(text, encoding),
                embedding=vectors[i].astype(np.float64).round(5),  # short literals; 5 decimals is ample for cosine
                embedding_model="bench",
                importance=0.3 + (i % 6) / 10,
                created_at=now - timedelta(days=180 * (items - i) / items),
                **fields,
            )
        )
    return project, rows


def bench_seed(*, items: int, seed: int = 7, rebuild_index_from: int = REBUILD_INDEX_FROM) -> Seeded:
    """A fresh workspace with `items` embedded items under one project with `items / 500` sessions.

    Needs committed writes (no surrounding transaction): a server in another process reads them.
    A failed seed deletes its workspace.
    """
    rng, clock = random.Random(seed), time.perf_counter()
    phases: list[tuple[str, float]] = []

    def phase(name: str) -> None:
        nonlocal clock
        phases.append((name, time.perf_counter() - clock))
        clock = time.perf_counter()

    workspace, key = workspace_create(slug=f"bench-{int(time.time())}-{rng.randrange(10**6)}")
    rebuild = items >= rebuild_index_from
    try:
        texts = passages(rng)
        vectors = unit_rows(embeddings.embed_passages(texts), items, 0.02, np.random.default_rng(seed))
        phase(f"{len(texts)} passage embeddings")
        project, rows = _rows(workspace, items, vectors, texts)
        phase("layers and rows")
        _insert(rows, rebuild=rebuild, phase=phase)
    except BaseException:
        workspace.delete()
        raise
    return Seeded(workspace, project.pk, key.secret, items, max(1, items // SESSION_SIZE), tuple(phases), rebuild)


def _insert(rows: list[Item], *, rebuild: bool, phase: Callable[[str], None]) -> None:
    """One transaction of batched inserts, around which the HNSW index is dropped and rebuilt if `rebuild`."""
    if rebuild:
        drop_hnsw_index(connection)
    try:
        with transaction.atomic():
            Item.objects.bulk_create(rows, batch_size=2000)
        phase("bulk insert")
    finally:
        if rebuild:
            _create_index()
    if rebuild:
        phase("HNSW rebuild")
    with connection.cursor() as cur:  # what autovacuum does within a minute: plans see the new rows
        cur.execute(f"ANALYZE {Item._meta.db_table}")
    phase("analyze")


def _create_index() -> None:
    """Rebuild the HNSW index with memory for the whole graph (a build that spills is several times slower)."""
    with connection.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
    try:
        create_hnsw_index(connection)
    finally:
        with connection.cursor() as cur:
            cur.execute("RESET maintenance_work_mem")


def bench_delete(*, seeded: Seeded) -> None:
    """Delete the bench workspace; items go first, loading only what the delete signals read (no embeddings)."""
    Item.objects.filter(workspace=seeded.workspace).only("pk", "workspace_id").delete()
    seeded.workspace.delete()


def bench_reuse(*, slug: str) -> Seeded:
    """A workspace kept by an earlier `--keep` run, with a new API key (the old secret is only a hash)."""
    workspace = Workspace.objects.filter(slug=slug, slug__startswith="bench-").first()
    if workspace is None:
        raise ValueError(f"no kept bench workspace {slug!r}")
    project = Layer.objects.get(workspace=workspace, kind="project")
    items = Item.objects.filter(workspace=workspace).count()
    key = api_key_create(workspace=workspace, name=f"bench {int(time.time())}")
    return Seeded(workspace, project.pk, key.secret, items, max(1, items // SESSION_SIZE), (("reused", 0.0),), True)
