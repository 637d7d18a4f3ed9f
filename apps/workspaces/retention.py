"""A workspace's item retention, read by the sweep of the app that owns items (layers).

- `messages_retention_days`: message items of a *closed* session layer (no new message for
  SESSION_CLOSED_AFTER_DAYS) are kept this many days from their own time; None keeps them forever.
- `layer_kind_ttl_days`: items of layers of a kind named here ({"session": 30}) are kept this many days
  from their own time, whatever their session's state; kinds not named keep their items.
Pinned items never expire.

The layer kinds are the layers app's (it sits above this one): it registers them here at start, and
the settings API checks the TTL's keys against them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models import Q

from apps.workspaces.models import Workspace

LAYER_KINDS: list[str] = []


def layer_kinds_register(kinds: Iterable[str]) -> None:
    LAYER_KINDS[:] = list(kinds)


@dataclass(frozen=True)
class ItemRetention:
    workspace_id: int
    messages_days: int | None
    kind_ttl_days: Mapping[str, int]


def workspaces_item_retention() -> list[ItemRetention]:
    """The item retention of every workspace that has one, for the sweep."""
    rows = (
        Workspace.objects.filter(Q(messages_retention_days__gt=0) | ~Q(layer_kind_ttl_days={}))
        .order_by("id")
        .values_list("id", "messages_retention_days", "layer_kind_ttl_days")
    )
    return [
        ItemRetention(
            workspace_id=workspace_id,
            messages_days=messages or None,
            kind_ttl_days={  # the API checked them; a restored archive's odd values are skipped
                str(kind): days
                for kind, days in (ttl if isinstance(ttl, dict) else {}).items()
                if type(days) is int and days > 0
            },
        )
        for workspace_id, messages, ttl in rows
    ]
