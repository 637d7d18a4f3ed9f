"""Reads of summaries: cache first, PostgreSQL on a miss (which repopulates the cache)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from django.db import connection

from apps.metrics.registry import CACHE_HITS, CACHE_MISSES
from apps.summaries import caching
from apps.summaries.errors import USER_NOT_FOUND
from apps.summaries.models import ProviderHealth, Summary, SummaryUsage


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
        raise NotFound(f"user {username!r} is not a member of this workspace", code=USER_NOT_FOUND)
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


def summaries_health(*, workspace_id: int) -> tuple[int, int]:
    """(summaries stale now, the summary LLM's failures in a row) of the workspace, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {Summary._meta.db_table} WHERE workspace_id = %(ws)s AND stale), "
            f"(SELECT consecutive_failures FROM {ProviderHealth._meta.db_table} WHERE workspace_id = %(ws)s)",
            {"ws": workspace_id},
        )
        stale, failures = cursor.fetchone()
    return int(stale), int(failures or 0)


def provider_health_get(*, workspace_id: int) -> ProviderHealth | None:
    """The workspace's record of LLM summarization failures (None: it never failed)."""
    return ProviderHealth.objects.filter(workspace_id=workspace_id).first()


def usage_get(*, workspace_id: int, day: date) -> SummaryUsage | None:
    """The workspace's summary LLM usage on `day` (None: no call that day)."""
    return SummaryUsage.objects.filter(workspace_id=workspace_id, day=day).first()


def summary_figures(*, workspace_id: int) -> dict[int, dict[str, Any]]:
    """Per layer with generic summaries: their depths, source hashes, whether any is stale and when the
    newest was generated (one query)."""
    figures: dict[int, dict[str, Any]] = {}
    for layer_id, depth, stale, generated_at, source_hash in Summary.objects.filter(
        workspace_id=workspace_id, personalized_for__isnull=True
    ).values_list("layer_id", "depth", "stale", "generated_at", "source_hash"):
        entry = figures.setdefault(layer_id, {"depths": [], "hashes": set(), "stale": False, "generated_at": None})
        entry["depths"].append(depth)
        entry["hashes"].add(source_hash)
        entry["stale"] = entry["stale"] or stale
        entry["generated_at"] = max(filter(None, [entry["generated_at"], generated_at]))
    return figures


def summaries_of_layer(*, layer_id: int) -> list[Summary]:
    """Every summary of the layer, generic first then per reader (with the reader), by depth."""
    return list(
        Summary.objects.filter(layer_id=layer_id)
        .select_related("personalized_for")
        .order_by("personalized_for_id", "depth")
    )


def summary_texts(*, workspace_id: int, layer_ids: Iterable[int]) -> dict[int, list[tuple[str, str]]]:
    """(depth, text) of the generic summaries of each of these layers of the workspace, by layer (one query)."""
    found: dict[int, list[tuple[str, str]]] = {}
    for layer_id, depth, text in Summary.objects.filter(
        workspace_id=workspace_id, layer_id__in=list(layer_ids), personalized_for__isnull=True
    ).values_list("layer_id", "depth", "text"):
        found.setdefault(layer_id, []).append((depth, text))
    return found


def generic_summaries(*, layer_id: int) -> list[Summary]:
    """The layer's three generic summaries, shortest first."""
    order = {"sentence": 0, "paragraph": 1, "detailed": 2}
    rows = list(Summary.objects.filter(layer_id=layer_id, personalized_for__isnull=True))
    return sorted(rows, key=lambda row: order.get(row.depth, 9))
