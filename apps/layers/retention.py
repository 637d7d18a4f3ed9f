"""Retention of items: the hourly sweep (CELERY_BEAT_SCHEDULE `expire-items`) deletes, per workspace
(apps/workspaces/retention.py):
- message items of closed session layers older than `messages_retention_days`. A session layer is
  closed once its newest message is older than SESSION_CLOSED_AFTER_DAYS (there is no explicit close:
  a session that gets a new message is open again); an open session keeps all of its messages;
- items of layers of a kind named in `layer_kind_ttl_days` older than that kind's TTL.
An item's age is its own `created_at`; pinned items never expire.

Deletion goes by batches of ids in short transactions, as erasure deletes: the items are locked
first, then deleted with what the cascade reaches (relationships, access counts, community members),
the embedder's claims on them go, each touched layer counts the changes (its summaries see them;
one left empty clears them) and the workspace's content version moves, so no cache serves the text.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from apps.core.versions import content_changed
from apps.layers.models import EmbeddingClaim, Item, ItemKind, Layer, LayerKind
from apps.layers.signals import changes_counted
from apps.workspaces.retention import ItemRetention, workspaces_item_retention

log = logging.getLogger(__name__)

BATCH = 1_000

_LOCK_ITEMS_SQL = "SELECT id FROM layers_item WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE"


def _expired(retention: ItemRetention, now: datetime) -> list[Q]:
    """One filter per rule of the workspace; an item matching any of them has expired."""
    rules: list[Q] = []
    if retention.messages_days:
        newer = Item.objects.filter(
            layer_id=OuterRef("layer_id"),
            kind=ItemKind.MESSAGE,
            created_at__gte=now - timedelta(days=settings.SESSION_CLOSED_AFTER_DAYS),
        )
        rules.append(
            Q(
                kind=ItemKind.MESSAGE,
                layer__kind=LayerKind.SESSION,
                created_at__lt=now - timedelta(days=retention.messages_days),
            )
            & ~Q(Exists(newer))
        )
    for kind, days in sorted(retention.kind_ttl_days.items()):
        rules.append(Q(layer__kind=kind, created_at__lt=now - timedelta(days=days)))
    return rules


def _delete_batch(workspace_id: int, candidates: QuerySet[Item], batch: int) -> tuple[int, int]:
    """Delete the first `batch` candidates; returns (how many were chosen, how many deleted)."""
    with transaction.atomic():
        rows = list(candidates.order_by("id").values_list("id", "layer_id")[:batch])
        if not rows:
            return 0, 0
        ids = [item_id for item_id, _ in rows]
        with connection.cursor() as cur:
            cur.execute(_LOCK_ITEMS_SQL, [ids])
            ids = [row[0] for row in cur.fetchall()]  # those deleted meanwhile are gone
        Item.objects.filter(pk__in=ids).delete()
        EmbeddingClaim.objects.filter(item_id__in=ids).delete()
        kept = set(ids)
        for layer_id, count in Counter(layer for item_id, layer in rows if item_id in kept).items():
            changes_counted.send(sender=Layer, layer_id=layer_id, count=count)
        content_changed(workspace_id)
    return len(rows), len(ids)


def items_expire(*, now: datetime | None = None, batch: int = BATCH) -> int:
    """Delete every workspace's items past its retention; returns how many."""
    now = now or timezone.now()
    total = 0
    for retention in workspaces_item_retention():
        for rule in _expired(retention, now):
            candidates = Item.objects.filter(rule, workspace_id=retention.workspace_id, pinned=False)
            while True:
                chosen, deleted = _delete_batch(retention.workspace_id, candidates, batch)
                total += deleted
                if chosen < batch:
                    break
    if total:
        log.info("items past their workspace's retention: %d deleted", total)
    return total
