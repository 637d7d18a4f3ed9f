"""What a layer's summary is made of: its newest items and its child layers' summaries.

Upper layers summarize their own items *and* their children's detailed summaries, so a company
summary reflects its teams (hierarchical compression). The source hash covers exactly what the
provider reads, so an unchanged hash means an unchanged summary.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.conf import settings

from apps.layers.models import Item, Layer
from apps.summaries.models import Depth, Summary


@dataclass(frozen=True)
class Source:
    """The texts to summarize, in order: child summaries first (broad), then items oldest → newest."""

    layer_id: int
    kind: str
    name: str
    child_summaries: tuple[str, ...]
    items: tuple[str, ...]
    item_ids: tuple[int, ...]
    digest: str = field(default="")

    @property
    def texts(self) -> list[str]:
        return [*self.child_summaries, *self.items]

    @property
    def empty(self) -> bool:
        return not self.child_summaries and not self.items


def _item_text(title: str, content: str) -> str:
    """The title leads when it adds words the content lacks (a heading becomes a sentence)."""
    if title and title.lower() not in content.lower():
        return f"{title.rstrip('.')}. {content}"
    return content


def source_of(*, layer: Layer) -> Source:
    """The layer's source: newest items up to SUMMARY_SOURCE_MAX_TOKENS, and children's summaries."""
    children = Summary.objects.filter(
        layer__parent=layer, depth=Depth.DETAILED, personalized_for__isnull=True
    ).order_by("layer_id")
    child_rows = list(children.values_list("layer_id", "text"))
    rows = (
        Item.objects.filter(layer=layer)
        .order_by("-created_at", "-id")
        .values_list("id", "title", "content", "content_hash", "token_count")
        .iterator(chunk_size=500)
    )
    budget = settings.SUMMARY_SOURCE_MAX_TOKENS
    kept: list[tuple[int, str, str]] = []
    for item_id, title, content, content_hash, tokens in rows:
        if kept and tokens > budget:
            break
        budget -= tokens
        kept.append((item_id, _item_text(title, content), content_hash))
    kept.reverse()
    digest = hashlib.sha256()
    for layer_id, text in child_rows:
        digest.update(f"child:{layer_id}:{hashlib.sha256(text.encode()).hexdigest()}\n".encode())
    for item_id, _, content_hash in kept:
        digest.update(f"item:{item_id}:{content_hash}\n".encode())
    return Source(
        layer_id=layer.pk,
        kind=layer.kind,
        name=layer.name,
        child_summaries=tuple(text for _, text in child_rows),
        items=tuple(text for _, text, _ in kept),
        item_ids=tuple(item_id for item_id, _, _ in kept),
        digest=digest.hexdigest(),
    )
