"""Background embedding of stored items, in bounded batches shared fairly between workspaces.

One batch is three short steps, and no transaction is open while the provider embeds:
1. claim: pick candidates (the newest waiting items of every workspace with work, shared in model
   tokens by deficit round-robin, within `EMBEDDING_BATCH_SIZE` items and `EMBEDDING_BATCH_TOKENS`
   estimated tokens) and insert their `EmbeddingClaim` leases in one short transaction, which commits;
2. embed the claimed passages (each cut to what the model reads: core/embeddings.py);
3. write the vectors back in one UPDATE, each only where the item's content hash is unchanged, and
   drop the claims.
So PATCH and DELETE of items never wait on the embedder, one workspace's bulk (long or CJK items
included) delays another workspace's new item by about one batch (~3 s of a core), and several
workers never embed one row twice. Within a workspace the newest items go first: an agent's new turn
is findable by meaning after about one batch even while the workspace's imported history (thousands
of turns, minutes of embedding) waits, and of the history the latest part comes first. Duplicates
and supersessions are found whichever of two items was embedded first. A background sweep runs
EMBEDDING_CONCURRENCY such loops at once, below the requests' priority, so a backlog is embedded on
every core.
An item edited while it was being embedded keeps its NULL embedding and is taken by the next batch.

A passage is embedded with the name of its layer in front ("contextual" embedding): a turn such
as "He's down to 22.5 pounds." says little alone, and its session's name says whose weight it is.
On the retrieval set this lifts the vector ranking's recall@20 from 0.86 to 0.95. Renaming a
layer does not re-embed its items.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import OperationalError, connection, connections, transaction

from apps.core import embeddings, events
from apps.core.versions import content_changed
from apps.layers.duplicates import near_duplicates_merge, near_pairs
from apps.layers.embedding_rate import rate_note
from apps.layers.embedding_space import space_problems_cached
from apps.layers.models import EmbeddingClaim, Item
from apps.layers.supersession import proposals_detect
from apps.layers.vectors import to_db_vector, vector_available
from apps.metrics.registry import ITEMS_EMBEDDED

log = logging.getLogger(__name__)


def passage_text(*, layer_name: str, title: str, content: str) -> str:
    return "\n".join(part for part in (layer_name, title, content) if part)


@dataclass(frozen=True)
class Candidate:
    """An item waiting for its embedding: its workspace and what it would cost the model (`tokens`,
    estimated from its bytes: TOKENS_ESTIMATE_SQL)."""

    id: int
    workspace_id: int
    tokens: int
    since: int = 0  # the workspace's oldest waiting item: workspaces take turns in this order


QUANTUM_TOKENS = 64  # each workspace's share per round of a batch plan (deficit round-robin)


def batch_plan(candidates: Sequence[Candidate], *, max_items: int, max_tokens: int) -> list[int]:
    """Item ids for one batch, shared fairly in model tokens between workspaces (deficit round-robin):
    each round every workspace with waiting items earns QUANTUM_TOKENS and sends its next items (in
    the order given: newest first) while they fit what it earned, so a workspace of long (or CJK)
    items gets the same compute as one of short turns, not the same number of items. The batch stops
    at `max_items` items or `max_tokens` tokens; the first item always goes, so a batch is never empty
    while work waits.
    Workspaces take turns in order of their oldest waiting item (`Candidate.since`)."""
    queues: dict[int, deque[Candidate]] = {}
    for candidate in sorted(candidates, key=lambda c: c.since):  # stable: each workspace's order is kept
        queues.setdefault(candidate.workspace_id, deque()).append(candidate)
    earned = dict.fromkeys(queues, 0)
    chosen: list[int] = []
    spent = 0
    while queues:
        for workspace_id in list(queues):  # insertion order = the workspace waiting longest first
            queue = queues[workspace_id]
            earned[workspace_id] += QUANTUM_TOKENS
            while queue and queue[0].tokens <= earned[workspace_id]:
                candidate = queue[0]
                if len(chosen) >= max_items or (chosen and spent + candidate.tokens > max_tokens):
                    return chosen
                queue.popleft()
                chosen.append(candidate.id)
                spent += candidate.tokens
                earned[workspace_id] -= candidate.tokens
            if not queue:
                del queues[workspace_id]
    return chosen


# What an item costs the model, from its bytes: a third of them (English: ~4.5 bytes a token, CJK:
# 3 bytes a character and ~0.75 tokens a character, so ~1.4x the real count of either), plus the
# layer name's and the special tokens, capped at what the model reads of one input.
TOKENS_ESTIMATE_SQL = (
    "least((octet_length(left(i.title, %(cap)s)) + octet_length(left(i.content, %(cap)s))) / 3 + 8, %(max_tokens)s)"
)

_CANDIDATES_SQL = """
WITH waiting AS (
    SELECT workspace_id, min(id) AS since FROM layers_item WHERE embedding IS NULL {only} GROUP BY workspace_id
)
SELECT c.id, c.workspace_id, c.tokens, w.since FROM waiting w CROSS JOIN LATERAL (
    SELECT i.id, i.workspace_id, {estimate} AS tokens
    FROM layers_item i
    WHERE i.workspace_id = w.workspace_id AND i.embedding IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM layers_embeddingclaim c WHERE c.item_id = i.id AND c.claimed_until > now()
      )
    ORDER BY i.id DESC LIMIT %(per_workspace)s
) c
ORDER BY w.since, c.id DESC
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


CLAIM_ATTEMPTS = 5


def items_claim_batch(*, workspace_id: int | None, max_items: int, max_tokens: int) -> list[Claimed]:
    """Claim one batch (a short transaction of its own) and return the passages to embed.

    Concurrent runners read the same newest candidates; the one whose lease lost every row plans
    again from what is still unclaimed instead of answering "nothing waits" (which ended its loop:
    a backlog then ran on one core while the other runner had quit)."""
    for _ in range(CLAIM_ATTEMPTS):
        claimed = _claim_once(workspace_id=workspace_id, max_items=max_items, max_tokens=max_tokens)
        if claimed is not None:
            return claimed
    return []


def _claim_once(*, workspace_id: int | None, max_items: int, max_tokens: int) -> list[Claimed] | None:
    """The claimed passages, [] when nothing waits, None when a concurrent runner took every planned row."""
    cap = settings.EMBEDDING_MAX_INPUT_CHARS
    item_tokens = embeddings.get_provider().max_tokens
    only = "AND workspace_id = %(workspace)s" if workspace_id is not None else ""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                _CANDIDATES_SQL.format(only=only, estimate=TOKENS_ESTIMATE_SQL),
                {"cap": cap, "max_tokens": item_tokens, "per_workspace": max_items, "workspace": workspace_id},
            )
            candidates = [Candidate(id=r[0], workspace_id=r[1], tokens=r[2], since=r[3]) for r in cursor.fetchall()]
            ids = batch_plan(candidates, max_items=max_items, max_tokens=max_tokens)
            if not ids:
                return []
            cursor.execute(_CLAIM_SQL, {"ids": ids, "lease": settings.EMBEDDING_CLAIM_SECONDS})
            claimed = [row[0] for row in cursor.fetchall()]
            if not claimed:
                return None
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
    (0 when nothing is waiting, or when the configuration cannot store vectors: logged with its fix).
    No transaction is open while the provider embeds."""
    problems = space_problems_cached()
    if problems:
        log.error("embedding nothing: %s", "; ".join(problems))
        return 0
    claimed = items_claim_batch(
        workspace_id=workspace_id, max_items=batch_size, max_tokens=settings.EMBEDDING_BATCH_TOKENS
    )
    if not claimed:
        return 0
    started, wall = time.perf_counter(), time.time()
    try:
        vectors = embeddings.embed_passages([row.text for row in claimed])
        tokens = sum(tokens_estimate(row.text) for row in claimed)
        rate_note(items=len(claimed), tokens=tokens, started=wall, seconds=time.perf_counter() - started)
    except Exception:
        _release([row.id for row in claimed])  # let the retry (or the next sweep) take them at once
        raise
    stored = _write_back(claimed, list(vectors), embeddings.model_label())
    for changed in {row.workspace_id for row in claimed}:  # new vectors change what search finds
        content_changed(changed)
        events.status_changed(changed)  # status subscribers see items_pending_embedding fall
    ITEMS_EMBEDDED.inc(stored)
    if stored:  # after the batch is announced: a merge announces its own change
        _similar_items([row.id for row in claimed])
    return len(claimed)


def _similar_items(ids: list[int]) -> None:
    """Near duplicates folded into their older twin, then supersession proposals, for the items just
    embedded, against items older and newer (whichever was embedded first: apps/layers/duplicates.py,
    supersession.py). Never fails the batch: logged instead."""
    if not vector_available(connection):
        return
    try:
        merged = near_duplicates_merge(pairs=near_pairs(ids))
        gone = {new for new, _ in merged}
        proposals_detect(ids=[i for i in ids if i not in gone])
    except Exception:  # noqa: BLE001 - the vectors are stored; a failed check only misses a merge or a proposal
        log.warning("the duplicate and supersession check of %d embedded items failed", len(ids), exc_info=True)


def tokens_estimate(text: str) -> int:
    """TOKENS_ESTIMATE_SQL for a passage in hand (the status's rate and backlog count in these units)."""
    return min(len(text.encode()) // 3 + 8, embeddings.get_provider().max_tokens)


def items_embed_pending(*, workspace_id: int | None = None, max_batches: int | None = None, runners: int = 1) -> int:
    """Embed until nothing is pending (or `max_batches` ran); returns the number of items claimed.

    With `runners` > 1 (the background sweep: EMBEDDING_CONCURRENCY), that many threads claim and
    embed batches at once, each at EMBEDDING_NICE (below the requests' threads, so queries and
    context requests keep their latency), and this thread waits for them."""
    if runners > 1 and max_batches is None:
        return _embed_on_runners(workspace_id=workspace_id, runners=runners)
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


def _embed_on_runners(*, workspace_id: int | None, runners: int) -> int:
    counted: list[int] = []
    failures: list[BaseException] = []

    def run() -> None:
        _lower_priority()
        try:
            counted.append(items_embed_pending(workspace_id=workspace_id))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            failures.append(exc)
        finally:
            connections.close_all()  # this thread's connection goes back to the pool

    threads = [threading.Thread(target=run, name=f"embedder-{n}", daemon=True) for n in range(runners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return sum(counted)


def _lower_priority() -> None:
    """This thread at EMBEDDING_NICE (Linux: a thread's own nice value): the CPU goes to requests first."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), settings.EMBEDDING_NICE)
    except (OSError, AttributeError):  # not Linux, or not allowed: same priority as before
        log.debug("could not lower the embedder thread's priority", exc_info=True)
