"""Keep the summary cache a faithful copy: every saved or deleted Summary refreshes its entry; and
answer the layers' `changes_counted` with the change trigger.

(The services write in bulk, which sends no signals, and refresh once themselves.)
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from apps.layers.signals import changes_counted
from apps.summaries import caching
from apps.summaries.models import Summary


def _refresh(sender: Any, instance: Summary, **kwargs: Any) -> None:
    caching.refresh_with_commit(instance.layer_id, instance.personalized_for_id)


def _changes_counted(sender: Any, layer_id: int, **kwargs: Any) -> None:
    from apps.summaries.services import changes_noted

    changes_noted(layer_id=layer_id)


def connect() -> None:
    changes_counted.connect(_changes_counted, dispatch_uid="summaries-change-trigger")
    post_save.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-save")
    post_delete.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-delete")
