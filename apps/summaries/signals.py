"""Keep the summary cache a faithful copy: every saved or deleted Summary refreshes its entry; and
answer the layers' hooks: a new layer gets its configuration (`layer_created`), item writes count
toward the change trigger (`changes_counted`).

(The services write in bulk, which sends no signals, and refresh once themselves.)
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from apps.layers.models import Layer
from apps.layers.signals import changes_counted, layer_created
from apps.summaries import caching
from apps.summaries.config import config_create
from apps.summaries.models import Summary


def _refresh(sender: Any, instance: Summary, **kwargs: Any) -> None:
    caching.refresh_with_commit(instance.layer_id, instance.personalized_for_id)


def _changes_counted(sender: Any, layer_id: int, count: int, **kwargs: Any) -> None:
    from apps.summaries.services import changes_add

    changes_add(layer_id=layer_id, count=count)


def _layer_created(sender: Any, layer: Layer, **kwargs: Any) -> None:
    config_create(layer=layer)


def connect() -> None:
    layer_created.connect(_layer_created, dispatch_uid="summaries-layer-config")
    changes_counted.connect(_changes_counted, dispatch_uid="summaries-change-trigger")
    post_save.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-save")
    post_delete.connect(_refresh, sender=Summary, dispatch_uid="summary-cache-delete")
