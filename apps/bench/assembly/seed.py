"""Seeding the bench workspace: one project with many sessions, bulk-inserted with precomputed vectors.

A small seed inserts through the ORM into the live indexes. From REBUILD_INDEX_FROM items on, rows
are generated a chunk at a time and streamed by binary COPY into the table with its secondary
indexes dropped, which are built once after the load (bulk_load.py): one HNSW build takes ~20 s
for 100k rows where filling the live index row by row takes minutes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.bench.assembly.bulk_load import COLUMNS, copy_rows
from apps.bench.assembly.corpus import item_text, passages, unit_rows
from apps.core import embeddings, tokenizer
from apps.layers.models import Item, ItemSearch, Layer
from apps.layers.services import content_hash, layer_create
from apps.workspaces.models import Workspace
from apps.workspaces.services import api_key_create, workspace_create

REBUILD_INDEX_FROM = 5_000  # below this many items, inserting into the live index is cheaper than a rebuild
SESSION_SIZE = 500  # items per session; ten sessions to a multi-session
COPY_CHUNK = 20_000  # rows generated and held at a time by the COPY path


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


def _fields(i: int, items: int, texts: list[str], layers: tuple[Layer, Layer, list[Layer]], now: Any) -> dict[str, Any]:
    """Item `i`'s fields but its vector: kind, layer, content, hash, tokens, importance, age."""
    team, project, leaves = layers
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    text = item_text(texts[i % len(texts)], i)
    fields = _kind_fields(i, leaves[i * len(leaves) // items], team, project, text)  # sessions fill oldest first
    return {
        "content": text,
        "content_hash": content_hash(title=fields.get("title", ""), content=text),
        "token_count": tokenizer.count_tokens(text, encoding),
        "embedding_model": embeddings.model_label(),  # jittered vectors of the configured model's embeddings
        "importance": 0.3 + (i % 6) / 10,
        "created_at": now - timedelta(days=180 * (items - i) / items),
        **fields,
    }


def _rows(workspace: Workspace, items: int, vectors: np.ndarray, texts: list[str]) -> tuple[Layer, list[Item]]:
    """The layers, and the items to insert under them; returns the project too."""
    layers = _layers(workspace, max(1, items // SESSION_SIZE))
    now = timezone.now()
    rows = [
        Item(
            workspace=workspace,
            embedding=vectors[i].astype(np.float64).round(5),  # short literals; 5 decimals is ample for cosine
            **_fields(i, items, texts, layers, now),
        )
        for i in range(items)
    ]
    return layers[1], rows


Layers = tuple[Layer, Layer, list[Layer]]  # the team, the project and the sessions


def _copy_chunks(
    workspace: Workspace, items: int, base: np.ndarray, texts: list[str], layers: Layers, seed: int
) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of `items` items in COPY column order, COPY_CHUNK at a time (vectors generated per chunk)."""
    rng, now = np.random.default_rng(seed), timezone.now()
    defaults: dict[str, Any] = {"type": "", "title": "", "pinned": False, "metadata": {}, "role": ""}
    defaults |= {"task_ids": [], "confidence": None, "priority": "", "group_id": "", "agent_types": []}
    defaults |= {"source_refs": [], "helpfulness": 0.5, "seen_count": 1, "merged_external_ids": [], "mergeable": True}
    for start in range(0, items, COPY_CHUNK):
        count = min(COPY_CHUNK, items - start)
        vectors = unit_rows(np.roll(base, -start, axis=0), count, 0.02, rng)  # row i jitters base[i % len(base)]
        chunk = []
        for offset in range(count):
            fields = defaults | _fields(start + offset, items, texts, layers, now)
            fields |= {"workspace_id": workspace.pk, "layer_id": fields.pop("layer").pk, "updated_at": now}
            fields["embedding"] = vectors[offset]
            chunk.append(tuple(fields[column] for column in COLUMNS))
        yield chunk


def bench_seed(
    *,
    items: int,
    seed: int = 7,
    rebuild_index_from: int = REBUILD_INDEX_FROM,
    corpus: tuple[list[str], np.ndarray] | None = None,
) -> Seeded:
    """A fresh workspace with `items` embedded items under one project with `items / 500` sessions.
    `corpus`: texts and their vectors for the items to jitter (else the bench's passages, embedded).

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
        if corpus is None:
            texts = passages(rng)
            base = embeddings.embed_passages(texts)
        else:
            texts, base = corpus
        phase(f"{len(texts)} passage embeddings")
        if rebuild:  # binary COPY of generated chunks, the indexes built after the load
            layers = _layers(workspace, max(1, items // SESSION_SIZE))
            project = layers[1]
            copy_rows(chunks=_copy_chunks(workspace, items, base, texts, layers, seed), items=items, phase=phase)
        else:
            vectors = unit_rows(base, items, 0.02, np.random.default_rng(seed))
            project, rows = _rows(workspace, items, vectors, texts)
            phase("layers and rows")
            _insert(rows, phase=phase)
    except BaseException:
        workspace.delete()
        raise
    return Seeded(workspace, project.pk, key.secret, items, max(1, items // SESSION_SIZE), tuple(phases), rebuild)


def _insert(rows: list[Item], *, phase: Callable[[str], None]) -> None:
    """One transaction of batched inserts into the live indexes."""
    with transaction.atomic():
        Item.objects.bulk_create(rows, batch_size=2000)
    phase("bulk insert")
    with connection.cursor() as cur:  # what autovacuum does within a minute: plans see the new rows
        cur.execute(f"ANALYZE {Item._meta.db_table}, {ItemSearch._meta.db_table}")
    phase("analyze")


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
