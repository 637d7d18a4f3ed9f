"""The conversation graph's answers to item writes in apps.layers, and what the items API shows of
its access counts (connected in `ConversationsConfig.ready`)."""

from __future__ import annotations

from typing import Any

from django.db.models import F

from apps.conversations.importance import automatic_importance
from apps.conversations.tasks import refresh_communities
from apps.core import background
from apps.layers.models import Item, ItemKind
from apps.layers.signals import item_annotations, item_prepared, messages_created


def _decision_importance(sender: Any, item: Item, **kwargs: Any) -> None:
    """A new message that states a decision is raised to decision importance."""
    if item.kind != ItemKind.MESSAGE or item.metadata.get("importance_source"):
        return
    item.importance, reason = automatic_importance(content=item.content, title=item.title, importance=item.importance)
    if reason:
        item.metadata = {**item.metadata, "importance_source": reason}


def _refresh_communities(sender: Any, layer_id: int, **kwargs: Any) -> None:
    background.enqueue(refresh_communities, layer_id)


def connect() -> None:
    # Through the reverse relation of `ItemAccess.item` (a LEFT JOIN): None for an item never served.
    item_annotations["served_count"] = F("access__access_count")
    item_annotations["served_last"] = F("access__last_accessed_at")
    item_prepared.connect(_decision_importance, dispatch_uid="conversations-decision-importance")
    messages_created.connect(_refresh_communities, dispatch_uid="conversations-communities")
