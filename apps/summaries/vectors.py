"""The summaries' passage vectors: embedded in the background after each write, by the items' path.

Each summary row's text is embedded as an item's would be (`layers.embedder.passage_text`, the layer
name in front, through the one embedding door `core.embeddings`), so that assembly ranks a layer
summary by its similarity to the query like an item (apps/assembly/retrieval.py). A write never
waits for it: `summaries_embed` runs after commit (tasks.embed_summaries) and on the periodic sweep,
and a failing embedder leaves the rows without a vector (assembly then ranks them as before) for
the next sweep. A vector is stored only where the row's text is still the one embedded.
"""

from __future__ import annotations

import logging

from django.db.models import Q

from apps.core import embeddings
from apps.core.stored_vectors import vector_pack
from apps.core.versions import content_changed
from apps.layers.embedder import passage_text
from apps.summaries import caching
from apps.summaries.models import Summary

log = logging.getLogger(__name__)

BATCH = 32  # rows per call of the embedder
MAX_BATCHES = 100  # per run; the next sweep takes the rest


def summaries_pending(*, layer_id: int | None = None, workspace_id: int | None = None) -> Q:
    """The rows without a vector of the configured model (of one layer or workspace, or of all)."""
    pending = Q(embedding__isnull=True) | ~Q(embedding_model=embeddings.model_label())
    if layer_id is not None:
        pending &= Q(layer_id=layer_id)
    if workspace_id is not None:
        pending &= Q(workspace_id=workspace_id)
    return pending


def summaries_embed(*, layer_id: int | None = None, workspace_id: int | None = None) -> int:
    """Embed the summary rows still without a vector (of one layer or workspace, or all); returns how many were stored.

    Never raises for the embedder: a failure is logged and the rows wait for the next sweep."""
    stored, seen = 0, 0
    for _ in range(MAX_BATCHES):
        rows = list(
            Summary.objects.filter(summaries_pending(layer_id=layer_id, workspace_id=workspace_id))
            .order_by("id")
            .values_list("id", "workspace_id", "layer_id", "layer__name", "text", "personalized_for_id")[
                seen : seen + BATCH
            ]
        )
        if not rows:
            break
        try:
            vectors = embeddings.embed_passages(
                [passage_text(layer_name=name, title="", content=text) for _, _, _, name, text, _ in rows]
            )
        except Exception:  # noqa: BLE001 - a failing embedder degrades to summaries without vectors
            log.warning("embedding %d summaries failed; the next sweep tries again", len(rows), exc_info=True)
            break
        label = embeddings.model_label()
        touched: set[tuple[int, int, int | None]] = set()
        for (pk, workspace_id, row_layer, _, text, user_id), vector in zip(rows, vectors, strict=True):
            # Only where the text is still the one embedded: a regeneration meanwhile cleared the vector.
            if Summary.objects.filter(pk=pk, text=text).update(embedding=vector_pack(vector), embedding_model=label):
                stored += 1
                touched.add((workspace_id, row_layer, user_id))
            else:
                seen += 1  # still pending under its new text: the next run embeds that
        for _, layer, reader in touched:
            caching.refresh(layer, reader)
        for changed in {t[0] for t in touched}:
            content_changed(changed)  # cached contexts ranked these summaries without their vector
    return stored
