"""Background embedding of stored items, in bounded batches shared fairly between workspaces.

One batch is three short steps, and no transaction is open while the provider embeds:
1. claim: pick candidates (the oldest waiting items of every workspace with work, round-robin,
   within `EMBEDDING_BATCH_SIZE` items and `EMBEDDING_BATCH_CHARS` characters) and insert their
   `EmbeddingClaim` leases in one short transaction, which commits;
2. embed the claimed passages (each cut to `EMBEDDING_MAX_INPUT_CHARS`: models read only their
   first few hundred tokens, and an endpoint refuses longer input);
3. write the vectors back in one UPDATE, each only where the item's content hash is unchanged, and
   drop the claims.
So PATCH and DELETE of items never wait on the embedder, a 10 MB bulk in one workspace delays
another workspace's new item by one batch at most, and several workers never embed one row twice.
An item edited while it was being embedded keeps its NULL embedding and is taken by the next batch.

A passage is embedded with the name of its layer in front ("contextual" embedding): a turn such
as "He's down to 22.5 pounds." says little alone, and its session's name says whose weight it is.
On the retrieval set this lifts the vector ranking's recall@20 from 0.86 to 0.95. Renaming a
layer does not re-embed its items.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import OperationalError, connection, transaction

from apps.core import embeddings, events
from apps.core.versions import content_changed
from apps.layers.embedding_rate import rate_note
from apps.layers.models import EmbeddingClaim, Item
from apps.layers.vectors import to_db_vector, vector_available
from apps.metrics.registry import ITEMS_EMBEDDED

log = logging.getLogger(__name__)


def passage_text(*, layer_name: str, title: str, content: str) -> str:
    return "\n".join(part for part in (layer_name, title, content) if part)


@dataclass(frozen=True)
class Candidate:
    """An item waiting for its embedding: its workspace and the characters it would send."""

    id: int
    workspace_id: int
    chars: int


def batch_plan(candidates: Sequence[Candidate], *, max_items: int, max_chars: int) -> list[int]:
    """Item ids for one batch: round-robin over workspaces (each round in order of their oldest
    waiting item), until `max_items` items or `max_chars` characters; the first item always goes,
    so a batch is never empty while work waits. `candidates` come oldest first per workspace."""
    queues: dict[int, list[Candidate]] = {}
    for candidate in sorted(candidates, key=lambda c: c.id):
        queues.setdefault(candidate.workspace_id, []).append(candidate)
    chosen: list[int] = []
    chars = 0
    depth = 0
    while len(chosen) < max_items and any(len(queue) > depth for queue in queues.values()):
        for queue in queues.values():  # insertion order = oldest waiting item first
            if depth >= len(queue) or len(chosen) >= max_items:
                continue
            candidate = queue[depth]
            if chosen and chars + candidate.chars > max_chars:
                return chosen
            chosen.append(candidate.id)
            chars += candidate.chars
        depth += 1
    return chosen


_CANDIDATES_SQL = """
WITH waiting AS (SELECT DISTINCT workspace_id FROM layers_item WHERE embedding IS NULL {only})
SELECT c.id, c.workspace_id, c.chars FROM waiting w CROSS JOIN LATERAL (
    SELECT i.id, i.workspace_id, least(length(i.title) + length(i.content), %(cap)s) AS chars
    FROM layers_item i
    WHERE i.workspace_id = w.workspace_id AND i.embedding IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM layers_embeddingclaim c WHERE c.item_id = i.id AND c.claimed_until > now()
      )
    ORDER BY i.id LIMIT %(per_workspace)s
) c
"""

# Lease the planned items (a concurrent worker's fresh claim wins), then read what to embed.
_CLAIM_SQL = """
INSERT INTO layers_embeddingclaim (item_id, claimed_until)
SELECT id, now() + make_interval(secs => %(lease)s) FROM unnest(%(ids)s::bigint[]) AS id
ON CONFLICT (item_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
    WHERE layers_embeddingclaim.claimed_until <= now()
RETURNING item_id
"""

_CLAIMED_SQL = """
SELECT i.id, i.workspace_id, i.content_hash, l.name, left(i.title, %(cap)s), left(i.content, %(cap)s)
FROM layers_item i JOIN layers_layer l ON l.id = i.layer_id
WHERE i.id = ANY(%(ids)s) AND i.embedding IS NULL ORDER BY i.id
"""


@dataclass(frozen=True)
class Claimed:
    id: int
    workspace_id: int
    content_hash: str
    text: str


def items_claim_batch(*, workspace_id: int | None, max_items: int, max_chars: int) -> list[Claimed]:
    """Claim one batch (a short transaction of its own) and return the passages to embed."""
    cap = settings.EMBEDDING_MAX_INPUT_CHARS
    only = "AND workspace_id = %(workspace)s" if workspace_id is not None else ""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                _CANDIDATES_SQL.format(only=only),
                {"cap": cap, "per_workspace": max_items, "workspace": workspace_id},
            )
            candidates = [Candidate(id=r[0], workspace_id=r[1], chars=r[2]) for r in cursor.fetchall()]
            ids = batch_plan(candidates, max_items=max_items, max_chars=max_chars)
            if not ids:
                return []
            cursor.execute(_CLAIM_SQL, {"ids": ids, "lease": settings.EMBEDDING_CLAIM_SECONDS})
            claimed = [row[0] for row in cursor.fetchall()]
            if not claimed:
                return []
            cursor.execute(_CLAIMED_SQL, {"ids": claimed, "cap": cap})
            rows = cursor.fetchall()
    return [
        Claimed(
            id=item_id,
            workspace_id=ws,
            content_hash=digest,
            text=passage_text(layer_name=name, title=title, content=content)[:cap],
        )
        for item_id, ws, digest, name, title, content in rows
    ]


def _release(ids: list[int]) -> None:
    EmbeddingClaim.objects.filter(item_id__in=ids).delete()


# One statement per batch: each vector goes where the item's content hash still matches and no
# vector was stored meanwhile (an edit during embedding changes the hash; the next batch takes it).
_WRITE_BACK_SQL = """
UPDATE layers_item i SET embedding = v.embedding, embedding_model = %(model)s
FROM unnest(%(ids)s::bigint[], %(hashes)s::text[], %(vectors)s::vector[]) AS v(id, content_hash, embedding)
WHERE i.id = v.id AND i.content_hash = v.content_hash AND i.embedding IS NULL
"""


def _store_batch(claimed: list[Claimed], vectors: Sequence[object], model: str) -> int:
    """Store the batch's vectors (one UPDATE where pgvector exists); returns how many were stored."""
    if not vector_available(connection):  # real[] column: the ORM adapts each list
        return sum(_store_one(row, vector, model) for row, vector in zip(claimed, vectors, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            _WRITE_BACK_SQL,
            {
                "ids": [row.id for row in claimed],
                "hashes": [row.content_hash for row in claimed],
                "vectors": [to_db_vector(vector, connection) for vector in vectors],
                "model": model,
            },
        )
        return cursor.rowcount


def _store_one(row: Claimed, vector: object, model: str) -> int:
    return Item.objects.filter(pk=row.id, content_hash=row.content_hash, embedding__isnull=True).update(
        embedding=vector, embedding_model=model
    )


def _write_back(claimed: list[Claimed], vectors: Sequence[object], model: str) -> int:
    """Store each vector where the content hash still matches; returns how many were stored."""
    try:
        with transaction.atomic():
            stored = _store_batch(claimed, vectors, model)
            _release([row.id for row in claimed])
    except OperationalError:  # a row stayed locked past lock_timeout: store the others one by one
        log.warning("embedding write-back waited on a locked row; storing item by item", exc_info=True)
        stored = 0
        for row, vector in zip(claimed, vectors, strict=True):
            try:
                with transaction.atomic():
                    stored += _store_one(row, vector, model)
            except OperationalError:
                log.warning("item %s is locked; the next batch embeds it", row.id)
        _release([row.id for row in claimed])
    return stored


def items_embed_batch(*, workspace_id: int | None, batch_size: int) -> int:
    """Embed one batch of items still without an embedding; returns how many were claimed
    (0 when nothing is waiting). No transaction is open while the provider embeds."""
    claimed = items_claim_batch(
        workspace_id=workspace_id, max_items=batch_size, max_chars=settings.EMBEDDING_BATCH_CHARS
    )
    if not claimed:
        return 0
    started = time.perf_counter()
    try:
        vectors = embeddings.embed_passages([row.text for row in claimed])
        rate_note(items=len(claimed), seconds=time.perf_counter() - started)  # for the status's ETA
    except Exception:
        _release([row.id for row in claimed])  # let the retry (or the next sweep) take them at once
        raise
    provider = embeddings.get_provider()
    stored = _write_back(claimed, list(vectors), f"{provider.name}:{provider.model}")
    for changed in {row.workspace_id for row in claimed}:  # new vectors change what search finds
        content_changed(changed)
        events.status_changed(changed)  # status subscribers see items_pending_embedding fall
    ITEMS_EMBEDDED.inc(stored)
    return len(claimed)


def items_embed_pending(*, workspace_id: int | None = None, max_batches: int | None = None) -> int:
    """Embed until nothing is pending (or `max_batches` ran); returns the number of items claimed."""
    total, batches = 0, 0
    while max_batches is None or batches < max_batches:
        done = items_embed_batch(workspace_id=workspace_id, batch_size=settings.EMBEDDING_BATCH_SIZE)
        if done == 0:
            break
        total += done
        batches += 1
    if total:
        log.info("embedded %d items (workspace %s)", total, workspace_id)
    return total
