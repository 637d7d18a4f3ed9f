"""Keep the summary cache a faithful copy: every saved or deleted Summary refreshes its entry.

(The services write in bulk, which sends no signals, and refresh once themselves.)
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from apps.summaries import caching
from apps.summaries.models import Summary


def _refresh(sender: Any, instance: Summary, **kwargs: Any) -> None:
    caching.refresh_with_commit(instance.layer_id, instance.personalized_for_id)


def connect() -> None:
    post_save.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-save")
    post_delete.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-delete")
