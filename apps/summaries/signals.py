"""Keep the summary cache a faithful copy: every saved or deleted Summary refreshes its entry."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from apps.summaries import caching
from apps.summaries.models import Summary


def _refresh(sender: Any, instance: Summary, **kwargs: Any) -> None:
    layer_id, user_id = instance.layer_id, instance.personalized_for_id
    caching.refresh(layer_id, user_id)  # the writer's own next read
    transaction.on_commit(lambda: caching.refresh(layer_id, user_id))  # readers after commit


def connect() -> None:
    post_save.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-save")
    post_delete.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-delete")
