"""Readers of a personalized layer: members whose recent session content names them.

An item belongs to a user when its `metadata.user` is that member's username (agents set it on
the messages and memories they write for a person). A reader's *concerns* are an extractive
digest of their recent messages; their *preferences* are the memories tagged with them. Company
and org summaries never get here (config.GENERIC_KINDS).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from apps.layers.models import Item, ItemKind, Layer, LayerKind
from apps.layers.selectors import layer_scope, layer_tree
from apps.summaries.extractive import extractive_summary

SESSION_KINDS = (LayerKind.SESSION, LayerKind.MULTI_SESSION)
CONCERN_TOKENS = 60
PREFERENCE_TOKENS = 60
MAX_READERS = 20
ITEMS_PER_READER = 20


@dataclass(frozen=True)
class Reader:
    """One user's recent concerns and preferences, and the items they were drawn from."""

    user_id: int
    username: str
    concerns: str
    preferences: str
    item_ids: tuple[int, ...]

    @property
    def focus(self) -> list[str]:
        return [t for t in (self.concerns, self.preferences) if t]

    def reference(self) -> dict[str, Any]:
        """What the personalized summary is tagged with (Summary.personalization_ref)."""
        return {
            "user": self.username,
            "items": list(self.item_ids),
            "concerns": self.concerns,
            "preferences": self.preferences,
        }


def readers_of(*, layer: Layer, now: datetime, only_user_id: int | None = None) -> list[Reader]:
    """Members with session content in the layer's subtree during the last SUMMARY_PERSONAL_DAYS."""
    tree = layer_tree(workspace_id=layer.workspace_id)
    _, own, descendants = layer_scope(tree=tree, layer_id=layer.pk)
    sessions = [i for i in (*own, *descendants) if tree[i][1] in SESSION_KINDS]
    if not sessions:
        return []
    rows = (
        Item.objects.filter(
            workspace_id=layer.workspace_id,
            layer_id__in=sessions,
            created_at__gte=now - timedelta(days=settings.SUMMARY_PERSONAL_DAYS),
            metadata__has_key="user",
        )
        .order_by("-created_at", "-id")
        .values("id", "kind", "role", "content", "metadata")[:2000]
    )
    by_user: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        name = row["metadata"].get("user") if isinstance(row["metadata"], dict) else None  # `["user"]` has the key too
        if isinstance(name, str) and name and len(by_user.get(name, [])) < ITEMS_PER_READER:
            by_user.setdefault(name, []).append(row)
    members = get_user_model().objects.filter(
        memberships__workspace_id=layer.workspace_id, username__in=list(by_user)[: MAX_READERS * 2]
    )
    if only_user_id is not None:
        members = members.filter(pk=only_user_id)
    readers = []
    for user in members.order_by("username")[:MAX_READERS]:
        items = list(reversed(by_user[user.username]))  # oldest first
        said = [r["content"] for r in items if r["kind"] != ItemKind.MEMORY and r["role"] in ("", "user")]
        memories = [r["content"] for r in items if r["kind"] == ItemKind.MEMORY]
        readers.append(
            Reader(
                user_id=user.pk,
                username=user.username,
                concerns=extractive_summary(said, CONCERN_TOKENS),
                preferences=extractive_summary(memories, PREFERENCE_TOKENS),
                item_ids=tuple(r["id"] for r in items),
            )
        )
    return readers
