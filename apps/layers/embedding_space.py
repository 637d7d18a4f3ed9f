"""The stored vectors' embedding space against the configuration, checked at start and by /readyz.

A vector belongs to the model that made it: "provider:model" is kept beside it
(`Item.embedding_model`), and its size is the column's (`vector(N)`).
- Dimensions: the column's and the local model's must be EMBEDDING_DIMENSIONS, else no vector can
  be stored or searched. `space_problems` names each mismatch with its fix; the server does not
  start (`space_sync` from contextarch/asgi.py), /readyz answers 503 and the embedder embeds nothing.
- Model: a model other than the one the vectors are kept for (`EmbeddingSpace`) is a model change.
  `space_sync` records it and the background clears the other model's vectors in batches by id,
  so every item waits for the embedder again (`/api/v1/status/` shows the backlog and the change).
  Vector search reads only the current model's vectors (`vectors.nearest_items`), so a query is
  never compared with another model's vectors; items not re-embedded yet are found by keyword
  search, and answers say so (`reembedding_note`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.db.utils import OperationalError, ProgrammingError
from django.utils import timezone

from apps.core import embeddings
from apps.core.versions import content_changed
from apps.layers.models import EmbeddingSpace, Item
from apps.layers.vectors import vector_available

log = logging.getLogger(__name__)

CLEAR_BATCH = 5_000  # ids per clearing statement (each a short transaction of its own)
STATE_SECONDS = 5.0  # how long a process trusts what it read of the space (for answers' warnings)
_LOCK = 0x454D << 48  # "EM": the advisory lock that orders concurrent starts


def column_dimensions() -> int | None:
    """The item embedding column's dimensions: pgvector's `vector(N)`, else a stored vector's length
    (None: no table yet, or no vector to tell by)."""
    with connection.cursor() as cur:
        if vector_available(connection):
            cur.execute(
                "SELECT atttypmod FROM pg_attribute "
                "WHERE attrelid = to_regclass('layers_item') AND attname = 'embedding'"
            )
            row = cur.fetchone()
            return int(row[0]) if row and row[0] > 0 else None
        cur.execute("SELECT to_regclass('layers_item') IS NOT NULL")
        row = cur.fetchone()
        if not row or not row[0]:
            return None
        cur.execute("SELECT array_length(embedding, 1) FROM layers_item WHERE embedding IS NOT NULL LIMIT 1")
        row = cur.fetchone()
        return int(row[0]) if row and row[0] else None


def space_problems() -> list[str]:
    """What keeps vectors from being stored or searched, each with its fix ([] when none)."""
    expected = settings.EMBEDDING_DIMENSIONS
    try:
        provider = embeddings.get_provider()
    except ImproperlyConfigured as exc:
        return [str(exc)]
    problems = []
    if provider.name == "local" and provider.dimensions != expected:
        problems.append(
            f"EMBEDDING_DIMENSIONS={expected}, but the local model {provider.model} makes {provider.dimensions}-"
            f"dimension vectors: set EMBEDDING_DIMENSIONS={provider.dimensions}"
        )
    column = column_dimensions()
    if column is not None and column != expected:
        problems.append(
            f"EMBEDDING_DIMENSIONS={expected}, but the stored vectors (the column layers_item.embedding) have "
            f"{column} dimensions: set EMBEDDING_DIMENSIONS={column} (with a model that makes {column}-dimension "
            f"vectors), or run `manage.py embedding_dimensions {expected}` to drop every stored vector, resize the "
            "column and re-embed everything"
        )
    return problems


_checked: dict[str, float | list[str]] = {"at": -1e9, "problems": []}


def space_problems_cached(seconds: float = 60.0) -> list[str]:
    """`space_problems`, asked at most once per `seconds` in this process (the embedder asks per batch)."""
    now = time.monotonic()
    if now - float(_checked["at"]) > seconds:  # type: ignore[arg-type]
        _checked.update(at=now, problems=space_problems())
    return list(_checked["problems"])  # type: ignore[arg-type]


_synced: dict[str, bool] = {"done": False}
START_ATTEMPTS = 5  # a database slow to answer at start (a loaded machine): waits 0.5, 1, 2, 4 s


def space_sync(*, attempts: int = START_ATTEMPTS) -> None:
    """At start: refuse a configuration whose vectors cannot be stored (ImproperlyConfigured with the fix);
    record a model change and clear the other model's vectors in the background (re-embedding).
    A database that does not answer is not a reason to stop: the check is left to the embedder's
    next sweep (`space_sync_once`) and to /readyz."""
    problems: list[str] = []
    for attempt in range(attempts):
        try:
            problems = space_problems()
            break
        except OperationalError:
            connection.close()
            if attempt + 1 == attempts:
                log.warning("embedding configuration not checked at start: the database did not answer")
                return
            time.sleep(0.5 * 2**attempt)
    if problems:
        raise ImproperlyConfigured(
            "the embedding configuration does not fit the stored vectors: " + "; ".join(problems)
        )
    try:
        _record(embeddings.model_label())
    except OperationalError:
        log.warning("embedding model not recorded at start: the database did not answer", exc_info=True)


def space_sync_once() -> None:
    """`space_sync` unless it has run in this process (the embedder calls it before a sweep)."""
    if not _synced["done"]:
        try:
            space_sync(attempts=1)
        except ImproperlyConfigured:
            log.exception("the embedding configuration does not fit the stored vectors")


def _record(label: str) -> None:
    try:
        with transaction.atomic():
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK])  # two workers starting: one records
            space = EmbeddingSpace.objects.select_for_update().first()
            if space is None:  # the first start: whatever another model left (or an unlabelled vector) is cleared
                other = Item.objects.filter(embedding__isnull=False).exclude(embedding_model=label).exists()
                space = EmbeddingSpace.objects.create(
                    label=label, changed_at=timezone.now(), clear_from_id=0 if other else None
                )
            elif space.label != label:
                log.warning(
                    "EMBEDDING model changed from %s to %s: every item is re-embedded by %s (GET /api/v1/status/ "
                    "shows the backlog); until then items are found by keyword search only. To go back, set "
                    "EMBEDDING_PROVIDER and EMBEDDING_MODEL to %s",
                    space.label,
                    label,
                    label,
                    space.label,
                )
                space.previous_label, space.label = space.label, label
                space.changed_at, space.clear_from_id, space.reembedding = timezone.now(), 0, True
                space.save()
    except ProgrammingError:  # no tables yet: `migrate` has not run, and it will come back here at the next start
        log.warning("embedding space not checked: the database has no tables yet (run manage.py migrate)")
        return
    _synced["done"] = True
    if space.clear_from_id is not None:
        from apps.core import background
        from apps.layers.tasks import clear_other_model_vectors

        background.enqueue(clear_other_model_vectors)


def vectors_clear_other_models(*, batch: int = CLEAR_BATCH) -> int:
    """Clear the vectors of any model but the current one, `batch` ids at a time (resumable: the next id
    is kept in the space's row); returns how many were cleared. They become pending, so the embedder
    re-embeds them."""
    label = embeddings.model_label()
    cleared = 0
    while True:
        with transaction.atomic():
            space = EmbeddingSpace.objects.select_for_update().first()
            if space is None or space.label != label or space.clear_from_id is None:
                return cleared
            start = Item.objects.filter(pk__gte=space.clear_from_id).order_by("pk").values_list("pk", flat=True).first()
            if start is None:
                space.clear_from_id = None
                space.save(update_fields=["clear_from_id"])
                break
            with connection.cursor() as cur:
                cur.execute(
                    "UPDATE layers_item SET embedding = NULL, embedding_model = '' WHERE id >= %s AND id < %s "
                    "AND embedding IS NOT NULL AND embedding_model <> %s RETURNING workspace_id",
                    [start, start + batch, label],
                )
                workspaces = [row[0] for row in cur.fetchall()]
            space.clear_from_id = start + batch
            space.reembedding = space.reembedding or bool(workspaces)
            space.save(update_fields=["clear_from_id", "reembedding"])
            for workspace_id in set(workspaces):
                content_changed(workspace_id)
        cleared += len(workspaces)
    if cleared:
        log.info("cleared %d vectors of other embedding models; the embedder re-embeds them", cleared)
    return cleared


@dataclass(frozen=True)
class SpaceState:
    """The current model, and the change being re-embedded (if any)."""

    label: str
    previous_label: str
    changed_at: datetime | None
    reembedding: bool


_state: dict[str, object] = {"at": -1e9, "state": None}


def space_state() -> SpaceState:
    """The space as this process last read it (at most STATE_SECONDS ago). A finished re-embedding
    (nothing cleared still to come, nothing pending) is marked done here."""
    now = time.monotonic()
    cached = _state["state"]
    if isinstance(cached, SpaceState) and now - float(_state["at"]) < STATE_SECONDS:  # type: ignore[arg-type]
        return cached
    space = EmbeddingSpace.objects.first()
    label = embeddings.model_label()
    if space is None or space.label != label:
        state = SpaceState(label=label, previous_label="", changed_at=None, reembedding=False)
    else:
        cleared = space.clear_from_id is None
        if space.reembedding and cleared and not Item.objects.filter(embedding__isnull=True).exists():
            EmbeddingSpace.objects.filter(pk=space.pk, clear_from_id__isnull=True).update(reembedding=False)
            space.reembedding = False
        state = SpaceState(
            label=label, previous_label=space.previous_label, changed_at=space.changed_at, reembedding=space.reembedding
        )
    _state.update(at=now, state=state)
    return state


def space_forget() -> None:
    """Drop what this process remembers of the space and its checks (tests; after `column_resize`)."""
    _checked.update(at=-1e9)
    _state.update(at=-1e9, state=None)


def reembedding_note(*, workspace_id: int) -> str | None:
    """The warning for an answer while the workspace still has items the new model has not embedded."""
    state = space_state()
    if not state.reembedding:
        return None
    if not Item.objects.filter(workspace_id=workspace_id, embedding__isnull=True).exists():
        return None
    return (
        f"the embedding model changed to {state.label}: items not re-embedded yet are found by keyword search only "
        "(GET /api/v1/status/ shows items_pending_embedding)"
    )


def column_resize(*, dimensions: int) -> int:
    """Resize the embedding column to `dimensions`, dropping every vector (re-embedded afterwards);
    returns how many vectors were dropped. The HNSW index is rebuilt on the empty column."""
    from apps.layers.vectors import create_hnsw_index, drop_hnsw_index

    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("UPDATE layers_item SET embedding = NULL, embedding_model = '' WHERE embedding IS NOT NULL")
            cleared = cur.rowcount
            drop_hnsw_index(connection)
            column = f"vector({dimensions})" if vector_available(connection) else "real[]"
            cur.execute(f"ALTER TABLE layers_item ALTER COLUMN embedding TYPE {column} USING NULL")
            create_hnsw_index(connection)
        EmbeddingSpace.objects.all().delete()  # the next start records the model that fills it
    space_forget()
    return cleared
