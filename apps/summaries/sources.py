"""What a layer's summary is made of: its newest items and its child layers' summaries.

Upper layers summarize their own items *and* their children's detailed summaries, so a company
summary reflects its teams (hierarchical compression). The source hash covers exactly what the
provider reads, so an unchanged hash means an unchanged summary.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.text import ELLIPSIS
from apps.layers.models import Item, Layer
from apps.summaries.extractive import split_sentences
from apps.summaries.models import Depth, Summary


@dataclass(frozen=True)
class Source:
    """The texts to summarize, in order: child summaries first (broad), then items oldest → newest."""

    layer_id: int
    kind: str
    name: str
    child_summaries: tuple[str, ...]
    items: tuple[str, ...]  # contents: a title is a heading, not a sentence worth extracting
    item_ids: tuple[int, ...]
    item_titles: tuple[str, ...] = ()  # for the LLM prompt, aligned with `items`
    digest: str = field(default="")

    @property
    def texts(self) -> list[str]:
        return [*self.child_summaries, *self.items]

    @property
    def empty(self) -> bool:
        return not self.child_summaries and not self.items


def _whole_sentences(summary: str) -> str:
    """A child summary without the sentence it clipped to fill its target (never roll up a fragment)."""
    if not summary.endswith(ELLIPSIS):
        return summary
    parts = split_sentences(summary)
    return " ".join(parts[:-1]) if len(parts) > 1 else summary


def source_of(*, layer: Layer) -> Source:
    """The layer's source: newest items up to SUMMARY_SOURCE_MAX_TOKENS, and children's summaries."""
    children = Summary.objects.filter(
        layer__parent=layer, depth=Depth.DETAILED, personalized_for__isnull=True
    ).order_by("layer_id")
    child_rows = [(layer_id, _whole_sentences(text)) for layer_id, text in children.values_list("layer_id", "text")]
    rows = (
        Item.objects.filter(layer=layer)
        .order_by("-created_at", "-id")
        .values_list("id", "title", "content", "content_hash", "token_count")
        .iterator(chunk_size=500)
    )
    budget = settings.SUMMARY_SOURCE_MAX_TOKENS
    kept: list[tuple[int, str, str, str]] = []
    for item_id, title, content, content_hash, tokens in rows:
        if kept and tokens > budget:
            break
        budget -= tokens
        kept.append((item_id, title, content, content_hash))
    kept.reverse()
    digest = hashlib.sha256()
    for layer_id, text in child_rows:
        digest.update(f"child:{layer_id}:{hashlib.sha256(text.encode()).hexdigest()}\n".encode())
    for item_id, _, _, content_hash in kept:
        digest.update(f"item:{item_id}:{content_hash}\n".encode())
    return Source(
        layer_id=layer.pk,
        kind=layer.kind,
        name=layer.name,
        child_summaries=tuple(text for _, text in child_rows),
        items=tuple(content for _, _, content, _ in kept),
        item_ids=tuple(item_id for item_id, _, _, _ in kept),
        item_titles=tuple(title for _, title, _, _ in kept),
        digest=digest.hexdigest(),
    )
