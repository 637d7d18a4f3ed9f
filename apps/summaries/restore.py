"""An imported layer's summaries: stored as they came, the layer marked as just summarized."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.layers.models import Layer
from apps.summaries.models import LayerConfig, Summary

# The fields an export carries per summary (conversations' graph export and import).
SUMMARY_FIELDS = ("depth", "text", "token_count", "source_hash", "generated_at", "provider", "stale")


def summaries_of(*, layer: Layer) -> list[dict[str, Any]]:
    """The layer's generic summaries, SUMMARY_FIELDS of each, by depth (one query)."""
    return list(
        Summary.objects.filter(layer=layer, personalized_for__isnull=True).order_by("depth").values(*SUMMARY_FIELDS)
    )


@transaction.atomic
def summaries_restore(*, layer: Layer, summaries: Sequence[dict[str, Any]]) -> list[Summary]:
    """Store `summaries` (SUMMARY_FIELDS each, token counts already checked) as the layer's generic ones.

    The item writes of an import counted as changes: a session's change trigger would regenerate the
    summaries after commit and replace the imported ones. They describe exactly those items, so the
    layer starts as just summarized (the queued trigger then finds nothing due).
    """
    stored = [Summary.objects.create(workspace_id=layer.workspace_id, layer=layer, **s) for s in summaries]
    if stored:
        LayerConfig.objects.filter(layer=layer).update(changes_since_summary=0, last_summarized_at=timezone.now())
    return stored
