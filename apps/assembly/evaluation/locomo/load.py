"""Writing the LoCoMo samples into a workspace through the service's own write path, or finding
them again in one loaded earlier (`--reuse`), and waiting until every turn is embedded.

As a client would: one `multi_session` layer per sample under the company layer, one `session`
layer per session, each session's turns in one bulk write (`items_create`, what
`POST /api/v1/items/bulk/` calls), each in its own transaction so the change triggers
(embedding, summaries, communities) fire as they do for a client's requests.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from django.db import transaction

from apps.assembly.evaluation.locomo.data import LocomoSet, Sample
from apps.core import background
from apps.core.progress import ProgressBar
from apps.layers.embedder import items_embed_batch
from apps.layers.models import Item, ItemKind, Layer, LayerKind
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Workspace
from apps.workspaces.services import workspace_create

Progress = Callable[[str], None]
EMBED_TIMEOUT_SECONDS = 1800.0
EMBED_BATCH = 64
SETTLE_SECONDS = 600.0  # summaries and communities queued behind the embedding


class LoadError(RuntimeError):
    """The workspace could not be loaded or does not hold this data set."""


@dataclass(frozen=True)
class Loaded:
    workspace: Workspace
    layers: dict[str, int]  # sample id → its multi_session layer
    load_seconds: float
    reused: bool


def _write_sample(*, workspace: Workspace, root: Layer, sample: Sample) -> int:
    with transaction.atomic():
        top = layer_create(
            workspace=workspace, kind=LayerKind.MULTI_SESSION, name=sample.id, parent=root, external_id=sample.id
        )
    for session in sample.sessions:
        with transaction.atomic():
            layer = layer_create(
                workspace=workspace,
                kind=LayerKind.SESSION,
                name=session.external_id,
                parent=top,
                external_id=session.external_id,
            )
            items_create(
                layer=layer,
                items=[
                    ItemInput(
                        kind=ItemKind.MESSAGE,
                        role=t.role,
                        content=t.content,
                        external_id=t.external_id,
                        created_at=t.created_at,
                        metadata={"speaker": t.speaker, "session": t.session, "dia_id": t.dia_id},
                    )
                    for t in session.turns
                ],
            )
    return top.pk


def _pending(workspace_id: int) -> int:
    return Item.objects.filter(workspace_id=workspace_id, embedding__isnull=True).count()


def wait_embedded(*, workspace_id: int, progress: Progress, stream: TextIO | None = None) -> None:
    """Embed here (and let any background worker help) until nothing is pending, reporting progress
    (a bar on `stream` when given, else messages); then wait for the summaries and communities
    queued behind the embedding."""
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


def locomo_write(
    *, dataset: LocomoSet, progress: Progress, slug: str | None = None, stream: TextIO | None = None
) -> Loaded:
    """A fresh workspace holding the data set, every turn embedded."""
    started = time.perf_counter()
    slug = slug or f"locomo-{int(time.time())}-{secrets.token_hex(3)}"
    workspace, _ = workspace_create(slug=slug, name="LoCoMo evaluation")
    root = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    try:
        layers = {}
        for sample in dataset.samples:
            layers[sample.id] = _write_sample(workspace=workspace, root=root, sample=sample)
            progress(f"written {sample.id}: {len(sample.sessions)} sessions, {len(sample.turns)} turns")
        wait_embedded(workspace_id=workspace.pk, progress=progress, stream=stream)
    except BaseException:
        background.wait_idle(60)
        workspace.delete()
        raise
    return Loaded(workspace=workspace, layers=layers, load_seconds=time.perf_counter() - started, reused=False)


def locomo_reuse(*, dataset: LocomoSet, slug: str, progress: Progress, stream: TextIO | None = None) -> Loaded:
    """The workspace `slug` loaded earlier from the same data set (checked turn by turn)."""
    started = time.perf_counter()
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise LoadError(f"no workspace {slug!r} to reuse")
    layers = dict(
        Layer.objects.filter(
            workspace=workspace, kind=LayerKind.MULTI_SESSION, external_id__in=[s.id for s in dataset.samples]
        ).values_list("external_id", "pk")
    )
    stored = set(Item.objects.filter(workspace=workspace, kind=ItemKind.MESSAGE).values_list("external_id", flat=True))
    wanted = {t.external_id for s in dataset.samples for t in s.turns}
    if set(layers) != {s.id for s in dataset.samples} or not wanted <= stored:
        raise LoadError(f"workspace {slug!r} does not hold this data set (load it afresh with --keep)")
    wait_embedded(workspace_id=workspace.pk, progress=progress, stream=stream)
    return Loaded(
        workspace=workspace,
        layers={k: v for k, v in layers.items() if k},
        load_seconds=time.perf_counter() - started,
        reused=True,
    )
