"""Reads of summaries: cache first, PostgreSQL on a miss (which repopulates the cache)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apps.metrics.registry import CACHE_HITS, CACHE_MISSES
from apps.summaries import caching


def _lookup(layer_ids: list[int], user_id: int | None) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {}
    missing = []
    for layer_id in layer_ids:
        rows = caching.get(layer_id, user_id)
        if rows is None:
            missing.append(layer_id)
        else:
            found[layer_id] = rows
    CACHE_HITS.inc(len(found))
    if missing:
        CACHE_MISSES.inc(len(missing))
        for layer_id, rows in caching.rows_from_db(layer_ids=missing, user_id=user_id).items():
            caching.put(layer_id, user_id, rows)
            found[layer_id] = rows
    return found


def summaries_for_layers(*, layer_ids: Iterable[int], user_id: int | None = None) -> dict[int, list[dict[str, Any]]]:
    """Each layer's summary rows: the reader's personalized ones where they exist, else the generic ones.

    Callers pass layer ids they already scoped to the workspace.
    """
    ids = list(dict.fromkeys(layer_ids))
    personal = _lookup(ids, user_id) if user_id else {}
    generic_ids = [i for i in ids if not personal.get(i)]
    generic = _lookup(generic_ids, None) if generic_ids else {}
    return {i: personal.get(i) or generic.get(i) or [] for i in ids}


def member_get(*, workspace_id: int, username: str) -> Any:
    """The workspace member with this username, or NotFound (also for another workspace's user)."""
    from django.contrib.auth import get_user_model

    from apps.core.errors import NotFound

    user = get_user_model().objects.filter(memberships__workspace_id=workspace_id, username=username).first()
    if user is None:
        raise NotFound(f"user {username!r} is not a member of this workspace", code="user_not_found")
    return user


def layer_summaries_get(*, layer_id: int, user_id: int | None = None) -> list[dict[str, Any]]:
    """One layer's summaries for a reader (personalized where they exist), richest depth last."""
    order = {"sentence": 0, "paragraph": 1, "detailed": 2}
    rows = summaries_for_layers(layer_ids=[layer_id], user_id=user_id)[layer_id]
    return sorted(rows, key=lambda r: order.get(r["depth"], 9))


def member_id(*, workspace_id: int, username: str) -> int | None:
    """The id of the workspace member with this username, or None (then summaries stay generic)."""
    from django.contrib.auth import get_user_model

    return (
        get_user_model()
        .objects.filter(memberships__workspace_id=workspace_id, username=username)
        .values_list("pk", flat=True)
        .first()
    )
