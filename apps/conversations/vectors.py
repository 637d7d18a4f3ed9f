"""The communities' passage vectors: embedded in the background after each recomputation.

A community's title and summary are embedded as an item's text would be (`layers.embedder.
passage_text`, the layer name in front, through the one embedding door `core.embeddings`), so that
assembly ranks the community by its similarity to the query like an item (apps/assembly/sources/
communities.py). A recomputation keeps the vector of a community whose text did not change
(`vectors_carried`); the rest are embedded after commit (tasks.embed_communities) or by the periodic
sweep. A failing embedder leaves them without a vector (ranked as before) for the next sweep.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import Q

from apps.conversations.models import Community
from apps.core import embeddings
from apps.core.stored_vectors import vector_pack
from apps.core.versions import content_changed
from apps.layers.embedder import passage_text

log = logging.getLogger(__name__)

BATCH = 32  # communities per call of the embedder
MAX_BATCHES = 100  # per run; the next sweep takes the rest

TextKey = tuple[str, str, str, str]  # kind, key, title, summary


def communities_pending(*, layer_id: int | None = None, workspace_id: int | None = None) -> Q:
    """The communities without a vector of the configured model (of one layer or workspace, or of all)."""
    pending = Q(embedding__isnull=True) | ~Q(embedding_model=embeddings.model_label())
    if layer_id is not None:
        pending &= Q(layer_id=layer_id)
    if workspace_id is not None:
        pending &= Q(workspace_id=workspace_id)
    return pending


def vectors_carried(*, layer_id: int) -> dict[TextKey, tuple[bytes, str]]:
    """The stored vectors of the layer's communities by their text, to keep across a recomputation."""
    rows = Community.objects.filter(layer_id=layer_id, embedding__isnull=False).values_list(
        "kind", "key", "title", "summary", "embedding", "embedding_model"
    )
    return {
        (kind, key, title, summary): (bytes(data), model)
        for kind, key, title, summary, data, model in rows
        if data is not None
    }


def vector_fields(group: dict[str, Any], carried: dict[TextKey, tuple[bytes, str]]) -> dict[str, Any]:
    """The embedding fields of a new community row: its predecessor's vector when the text is the same."""
    found = carried.get((group["kind"], group["key"], group["title"], group["summary"]))
    return {"embedding": found[0], "embedding_model": found[1]} if found else {}


def communities_embed(*, layer_id: int | None = None, workspace_id: int | None = None) -> int:
    """Embed the communities still without a vector (of one layer or workspace, or all); returns how many were stored.

    Never raises for the embedder: a failure is logged and the rows wait for the next sweep."""
    stored, seen = 0, 0
    for _ in range(MAX_BATCHES):
        rows = list(
            Community.objects.filter(communities_pending(layer_id=layer_id, workspace_id=workspace_id))
            .order_by("id")
            .values_list("id", "workspace_id", "layer__name", "title", "summary")[seen : seen + BATCH]
        )
        if not rows:
            break
        try:
            vectors = embeddings.embed_passages(
                [passage_text(layer_name=name, title=title, content=summary) for _, _, name, title, summary in rows]
            )
        except Exception:  # noqa: BLE001 - a failing embedder degrades to communities without vectors
            log.warning("embedding %d communities failed; the next sweep tries again", len(rows), exc_info=True)
            break
        label = embeddings.model_label()
        workspaces: set[int] = set()
        for (pk, workspace_id, _, title, summary), vector in zip(rows, vectors, strict=True):
            # A recomputation meanwhile replaced the row (a new id): nothing to store, the new row is pending.
            if Community.objects.filter(pk=pk, title=title, summary=summary).update(
                embedding=vector_pack(vector), embedding_model=label
            ):
                stored += 1
                workspaces.add(workspace_id)
            else:
                seen += 1
        for workspace_id in workspaces:
            content_changed(workspace_id)  # cached contexts ranked these communities without their vector
    return stored
