"""Writing a set into a fresh workspace through the service's own write path, or finding it again in
one written earlier (`--reuse`), and waiting until every turn is embedded.

As a client would: one `multi_session` layer per conversation under the company layer, one
`session` layer per session, each session's turns in one bulk write (`items_create`, what
`POST /api/v1/items/bulk/` calls) or, for a threaded set, one write per turn naming the turn it
answers (`parent`); each session in its own transaction, so the change triggers (embedding,
summaries, communities) fire as they do for a client's requests, unless the set is written at once
(`Dataset.written_at_once`: one transaction, the triggers fire after the last turn).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TextIO

from django.db import transaction

from apps.bench.evaluation.data import Conversation, Dataset, Turn
from apps.conversations.vectors import communities_embed
from apps.core import background
from apps.core.progress import ProgressBar
from apps.layers.embedder import items_embed_batch
from apps.layers.models import Item, ItemKind, Layer, LayerKind
from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.vectors import summaries_embed
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

Progress = Callable[[str], None]
EMBED_TIMEOUT_SECONDS = 1800.0
EMBED_BATCH = 64
SETTLE_SECONDS = 600.0  # summaries and communities queued behind the embedding


class LoadError(RuntimeError):
    """The workspace could not be loaded or does not hold this set."""


@dataclass(frozen=True)
class Loaded:
    workspace: Workspace
    root_layer_id: int  # the company layer: the question's layer when every conversation is in scope
    layers: dict[str, int]  # conversation id → its multi_session layer
    load_seconds: float
    reused: bool


def _item(turn: Turn, parent: int | None = None) -> ItemInput:
    return ItemInput(
        kind=ItemKind.MESSAGE,
        role=turn.role,
        content=turn.content,
        external_id=turn.id,
        created_at=turn.created_at,
        parent=parent,
        metadata=dict(turn.metadata),
    )


def _write_conversation(*, workspace: Workspace, root: Layer, conversation: Conversation, threaded: bool) -> int:
    with transaction.atomic():
        top = layer_create(
            workspace=workspace,
            kind=LayerKind.MULTI_SESSION,
            name=conversation.name,
            parent=root,
            external_id=conversation.id,
        )
    parent: int | None = None  # a threaded set: each message answers the one before it, across sessions too
    for session in conversation.sessions:
        with transaction.atomic():
            layer = layer_create(
                workspace=workspace, kind=LayerKind.SESSION, name=session.name, parent=top, external_id=session.id
            )
            if not threaded:
                items_create(layer=layer, items=[_item(turn) for turn in session.turns])
                continue
            for turn in session.turns:
                (item,) = items_create(layer=layer, items=[_item(turn, parent)])
                parent = item.pk
    return top.pk


def _pending(workspace_id: int) -> int:
    return Item.objects.filter(workspace_id=workspace_id, embedding__isnull=True).count()


def wait_embedded(*, workspace_id: int, progress: Progress, stream: TextIO | None = None) -> None:
    """Embed here (and let any background worker help) until nothing is pending, reporting progress
    (a bar on `stream` when given, else messages); then wait for the summaries and communities
    queued behind the embedding, and embed those of them still without a vector."""
    total = Item.objects.filter(workspace_id=workspace_id).count()
    deadline = time.monotonic() + EMBED_TIMEOUT_SECONDS
    started = time.monotonic()
    bar = ProgressBar(total=total, label="embedding", stream=stream) if stream is not None else None
    try:
        while (left := _pending(workspace_id)) > 0:
            if bar is not None:
                bar.update(total - left)
            else:
                rate = (total - left) / max(time.monotonic() - started, 1e-6)
                progress(f"embedding: {total - left}/{total} done, {rate:.0f}/s")
            if time.monotonic() > deadline:
                raise LoadError(f"{left} items were still waiting for embeddings after {EMBED_TIMEOUT_SECONDS:.0f} s")
            if items_embed_batch(workspace_id=workspace_id, batch_size=EMBED_BATCH) == 0:
                time.sleep(0.5)  # a background worker holds the rest
        if bar is not None:
            bar.update(total)
    finally:
        if bar is not None:
            bar.close()
    progress(f"embedding: {total}/{total} done; waiting for summaries and communities")
    if not background.wait_idle(SETTLE_SECONDS):
        progress("background work still running after the wait; going on")
    # The summaries' and communities' vectors (assembly ranks them by similarity): what the background
    # has not embedded yet is embedded here, so no question is asked while some have none.
    stored = summaries_embed(workspace_id=workspace_id) + communities_embed(workspace_id=workspace_id)
    if stored:
        progress(f"embedded {stored} summaries and communities the background had not reached")


def dataset_write(
    *, dataset: Dataset, progress: Progress, slug: str | None = None, stream: TextIO | None = None
) -> Loaded:
    """A fresh workspace holding the set, every turn embedded (deleted again if that fails)."""
    started = time.perf_counter()
    slug = slug or f"eval-{dataset.name}-{int(time.time())}-{secrets.token_hex(3)}"
    workspace, _ = workspace_create(slug=slug, name=f"Evaluation: {dataset.title}")
    root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    try:
        layers = {}
        with transaction.atomic() if dataset.written_at_once else nullcontext():
            for conversation in dataset.conversations:
                layers[conversation.id] = _write_conversation(
                    workspace=workspace, root=root, conversation=conversation, threaded=dataset.threaded
                )
                turns = len(conversation.turns)
                progress(f"written {conversation.id}: {len(conversation.sessions)} sessions, {turns} turns")
        wait_embedded(workspace_id=workspace.pk, progress=progress, stream=stream)
    except BaseException:
        background.wait_idle(60)
        workspace.delete()
        raise
    return Loaded(
        workspace=workspace,
        root_layer_id=root.pk,
        layers=layers,
        load_seconds=time.perf_counter() - started,
        reused=False,
    )


def dataset_reuse(*, dataset: Dataset, slug: str, progress: Progress, stream: TextIO | None = None) -> Loaded:
    """The workspace `slug` written earlier from the same set (checked turn by turn)."""
    started = time.perf_counter()
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise LoadError(f"no workspace {slug!r} to reuse")
    ids = [c.id for c in dataset.conversations]
    layers = dict(
        Layer.objects.filter(workspace=workspace, kind=LayerKind.MULTI_SESSION, external_id__in=ids).values_list(
            "external_id", "pk"
        )
    )
    stored = set(Item.objects.filter(workspace=workspace, kind=ItemKind.MESSAGE).values_list("external_id", flat=True))
    if set(layers) != set(ids) or not {t.id for t in dataset.turns} <= stored:
        raise LoadError(f"workspace {slug!r} does not hold this set (load it afresh with --keep)")
    wait_embedded(workspace_id=workspace.pk, progress=progress, stream=stream)
    root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    return Loaded(
        workspace=workspace,
        root_layer_id=root.pk,
        layers={k: v for k, v in layers.items() if k},
        load_seconds=time.perf_counter() - started,
        reused=True,
    )
