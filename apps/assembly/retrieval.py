"""Candidate gathering for assembly: hybrid retrieval, pinned items, the conversation window,
layer summaries, related items and pluggable sources (error hints).

Each part is one statement whatever the workspace size; embeddings are never loaded here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Q
from psycopg.types.datetime import TimestamptzLoader

from apps.assembly.adjacency import ADJACENT_SQL, NEIGHBOUR_SEED_RANK
from apps.assembly.deadline import Deadline
from apps.assembly.engine import Candidate, Rung
from apps.assembly.engine.candidates import ITEM_FIELDS, item_candidate, item_row, search_origin
from apps.assembly.sources import SourceRequest, configured_sources
from apps.assembly.timings import StageTimes
from apps.layers.filters import ItemFilters, id_array
from apps.layers.hybrid_search import hybrid_search
from apps.layers.models import Item, Relationship
from apps.summaries.selectors import member_id, summaries_for_layers

log = logging.getLogger(__name__)

ROW_FIELDS = (*ITEM_FIELDS, "parent_id")
# The row columns in raw SQL on layers_item (aliased `i`), in ROW_FIELDS order.
_ROW_COLUMNS = ", ".join(f"i.{f}" for f in ROW_FIELDS)
_ITEM_COLUMNS = ", ".join(f"i.{f}" for f in ITEM_FIELDS)
SUMMARY_ORDER = ("detailed", "paragraph", "sentence")
# Window messages this important keep full detail at any distance (apps/conversations/importance.py).
FULL_DETAIL_IMPORTANCE = 0.9


@dataclass
class Retrieved:
    candidates: list[Candidate]
    vector_used: bool
    warnings: list[str] = field(default_factory=list)


def retrieve(
    *,
    filters: ItemFilters,
    layer_names: dict[int, str],
    query: str,
    query_vector: np.ndarray | None | Callable[[], np.ndarray | None],  # callable: still being computed
    limit: int,
    window_layer_ids: tuple[int, ...] = (),
    window_size: int = 0,
    deadline: Deadline | None = None,
    timings: StageTimes | None = None,
    neighbour_seeds: int = NEIGHBOUR_SEED_RANK,
) -> Retrieved:
    """Search hits (the shared hybrid search, apps/layers/hybrid_search.py; fused later by rank with
    the request's weights), pinned items and the conversation window.

    With a deadline, each search runs with a statement timeout of the time left and is skipped
    (and named in `deadline.skipped`) when none is left; keyword search always gets a floor.
    """
    deadline = deadline or Deadline(limit_ms=None)
    warnings: list[str] = []
    found = hybrid_search(
        filters=filters, query=query, query_vector=query_vector, limit=limit, deadline=deadline, timings=timings
    )
    vector_used = found.vector_used
    vector_by_id = {h.item_id: (rank, h.similarity) for rank, h in enumerate(found.vector, start=1)}
    keyword_by_id = {h.item_id: (rank, h.rank) for rank, h in enumerate(found.keyword, start=1)}

    # The hits' and pinned items' rows as tuples (raw SQL: no ORM query building per request). The
    # hits passed the filters in their searches, so they are fetched by id alone; the pinned items
    # are filtered. Two arms, not one `id = ANY(..) OR pinned`: planning that OR (a bitmap OR over
    # the table's indexes) cost more than running the statement.
    where, params = filters.sql()
    hit_ids = id_array([*vector_by_id, *keyword_by_id])
    sql = (
        f"SELECT {_ROW_COLUMNS} FROM layers_item i WHERE i.workspace_id = %s AND i.id = ANY(%s::bigint[]) "
        f"UNION ALL SELECT {_ROW_COLUMNS} FROM layers_item i WHERE {' AND '.join(where)} "
        "AND i.pinned AND NOT i.id = ANY(%s::bigint[])"
    )
    fetched = _fetch_rows(sql, [filters.workspace_id, hit_ids, *params, hit_ids])
    candidates: dict[int, Candidate] = {}
    parent_of: dict[int, int] = {}  # message hit → the turn it answers
    for values in fetched:
        row = item_row(ROW_FIELDS, values)
        parent = row.pop("parent_id")
        if parent and row["kind"] == "message":
            parent_of[row["id"]] = parent
        v_rank, v_sim = vector_by_id.get(row["id"], (None, None))
        k_rank, k_score = keyword_by_id.get(row["id"], (None, None))
        candidates[row["id"]] = item_candidate(
            row,
            layer_name=layer_names.get(row["layer_id"], ""),
            origin=search_origin(vector_rank=v_rank, keyword_rank=k_rank, pinned=row["pinned"]),
            vector_similarity=v_sim,
            vector_rank=v_rank,
            keyword_score=k_score,
            keyword_rank=k_rank,
        )
    if deadline.expired():
        deadline.skip("neighbouring turns and the conversation window")
        return Retrieved(candidates=list(candidates.values()), vector_used=vector_used, warnings=warnings)
    _add_neighbour_turns(candidates, parent_of, filters, layer_names, neighbour_seeds)
    if window_layer_ids and window_size > 0:
        for distance, row in enumerate(_window(filters.workspace_id, window_layer_ids, window_size)):
            # A search hit keeps its full ladder whatever its distance: it was asked for; so does an
            # important turn (a decision, a user-marked message: seed 002's importance override).
            if row["id"] not in candidates:
                kept = row["importance"] >= FULL_DETAIL_IMPORTANCE
                candidates[row["id"]] = item_candidate(
                    row,
                    layer_name=layer_names.get(row["layer_id"], ""),
                    origin="conversation",
                    distance=None if kept else distance,
                )
    return Retrieved(candidates=list(candidates.values()), vector_used=vector_used, warnings=warnings)


def _add_neighbour_turns(
    candidates: dict[int, Candidate],
    parent_of: dict[int, int],
    filters: ItemFilters,
    layer_names: dict[int, str],
    seed_rank: int = NEIGHBOUR_SEED_RANK,
) -> None:
    """The turn a retrieved message answers, the replies to it, and the turns said just before
    and after the top hits (the first `seed_rank` of either search) come along (one statement:
    the adjacency query is a CTE of the fetch of the rows).

    A question's answer often sits in the short turn next to the one that matched ("Weigh-in
    this morning: 79.5 kg." beside the assistant's reply about it). Neighbours rank right behind
    their hit (see rank.relevance_by_position).
    """
    messages = [c for c in candidates.values() if c.kind == "message" and (c.vector_rank or c.keyword_rank)]
    if not messages:
        return
    hits = [c.id for c in messages]
    hit_set = set(hits)
    wanted_parents = {parent_of[h]: h for h in hits if h in parent_of}
    seeds = [
        c.id for c in messages if min(c.vector_rank or seed_rank + 1, c.keyword_rank or seed_rank + 1) <= seed_rank
    ]
    # One statement: the turns next to the seeds (adjacency.py, as a CTE whose first row per
    # neighbour names its seed), then the rows of those turns, the hits' parents and their replies.
    where, params = filters.sql()
    sql = (
        f"WITH adj(neighbour, seed) AS MATERIALIZED ({ADJACENT_SQL}) "
        f"SELECT {_ROW_COLUMNS}, (SELECT a.seed FROM adj a WHERE a.neighbour = i.id LIMIT 1) "
        f"FROM layers_item i WHERE {' AND '.join(where)} AND i.kind = 'message' "
        "AND (i.id = ANY(%s::bigint[]) OR i.id = ANY(ARRAY(SELECT neighbour FROM adj)) "
        "OR i.parent_id = ANY(%s::bigint[]))"
    )
    fetched = _fetch_rows(
        sql, [filters.workspace_id, id_array(seeds), *params, id_array(wanted_parents), id_array(hits)]
    )
    for values in fetched:
        row = item_row(ROW_FIELDS, values)
        adjacent_seed = values[-1]
        parent = row.pop("parent_id")
        if row["id"] in candidates:
            continue
        via = parent if parent in hit_set else wanted_parents.get(row["id"], adjacent_seed)
        if via is None:
            continue
        metadata = {**(row["metadata"] or {}), "neighbour_of": via}
        candidates[row["id"]] = item_candidate(
            {**row, "metadata": metadata}, layer_name=layer_names.get(row["layer_id"], ""), origin="neighbour"
        )


def _window(workspace_id: int, layer_ids: tuple[int, ...], size: int) -> list[dict[str, Any]]:
    """The conversation's newest `size` messages, newest first (raw SQL: the ORM's query building
    and row decoding cost three times the statement's).

    `layer_id IN (..)`, as the ORM wrote it, not `= ANY(array)`: for one layer the planner then
    walks item_message_order newest first and stops after `size` rows instead of sorting them all.
    """
    layers = ", ".join(["%s"] * len(layer_ids))
    sql = (
        f"SELECT {_ITEM_COLUMNS} FROM layers_item i WHERE i.workspace_id = %s AND i.layer_id IN ({layers}) "
        "AND i.kind = 'message' ORDER BY i.created_at DESC, i.id DESC LIMIT %s"
    )
    return [item_row(ITEM_FIELDS, values) for values in _fetch_rows(sql, [workspace_id, *layer_ids, size])]


def _fetch_rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of a raw item statement, `created_at` (the column after `external_id`) in UTC.

    Django registers a pure-Python timestamptz loader on every connection (3.5 us a value); the
    cursor gets psycopg's C loader instead (0.4 us), whose datetimes are in the session's time zone.
    """
    with connection.cursor() as cur:
        cur.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cur.execute(sql, params)
        fetched = cur.fetchall()
    at = ROW_FIELDS.index("created_at")
    return [(*values[:at], values[at].astimezone(UTC), *values[at + 1 :]) for values in fetched]


def layer_summaries(
    *, workspace_id: int, layer_ids: Iterable[int], layer_names: dict[int, str], user: str = ""
) -> list[Candidate]:
    """One candidate per layer with summaries, its rungs detailed → paragraph → sentence.

    Read through the summary cache (PostgreSQL on a miss); `user` (a member's username) gets their
    personalized summaries where they exist, the generic ones elsewhere. `layer_ids` are the
    workspace's own (the caller scoped them).
    """
    user_id = member_id(workspace_id=workspace_id, username=user) if user else None
    by_layer: dict[int, dict[str, Any]] = {}
    for layer_id, rows in summaries_for_layers(layer_ids=layer_ids, user_id=user_id).items():
        for row in rows:
            by_layer.setdefault(layer_id, {})[row["depth"]] = row
    candidates = []
    for layer_id, depths in by_layer.items():
        rungs = tuple(Rung(depth, depths[depth]["text"]) for depth in SUMMARY_ORDER if depth in depths)
        newest = max(d["generated_at"] for d in depths.values())
        candidates.append(
            Candidate(
                id=layer_id,
                source="summary",
                kind="summary",
                type="",
                layer_id=layer_id,
                layer_name=layer_names.get(layer_id, ""),
                content=rungs[0].text,
                created_at=newest,
                rungs=rungs,
                title=f"Summary of {layer_names.get(layer_id, 'layer')}",
                importance=0.8,
                origin="summary",
                metadata={
                    "stale": any(d["stale"] for d in depths.values()),
                    "personalized": any(d["personalized_for_id"] for d in depths.values()),
                },
            )
        )
    return candidates


def related_items(
    *, seeds: dict[int, float], filters: ItemFilters, layer_names: dict[int, str], depth: int
) -> list[Candidate]:
    """Items reachable from `seeds` (id → relevance) along relationships, up to `depth` hops.

    A related item inherits half its neighbour's relevance per hop; already-known items are skipped.
    """
    known = set(seeds)
    frontier = dict(seeds)
    found: dict[int, tuple[float, int, int]] = {}  # id → (inherited relevance, hop, via)
    for hop in range(1, depth + 1):
        if not frontier:
            break
        edges = Relationship.objects.filter(
            Q(source_id__in=list(frontier)) | Q(target_id__in=list(frontier)), workspace_id=filters.workspace_id
        ).values_list("source_id", "target_id")
        nxt: dict[int, float] = {}
        for source, target in edges:
            for here, there in ((source, target), (target, source)):
                if here in frontier and there not in known:
                    relevance = frontier[here] * 0.5
                    if relevance > nxt.get(there, 0.0):
                        nxt[there] = relevance
                        found[there] = (relevance, hop, here)
        known.update(nxt)
        frontier = nxt
    if not found:
        return []
    rows = Item.objects.filter(filters.q() & Q(pk__in=list(found))).values(*ITEM_FIELDS)
    out = []
    for row in rows:
        relevance, hop, via = found[row["id"]]
        metadata = {
            **(row["metadata"] or {}),
            "related_via": via,
            "related_hops": hop,
            "inherited_relevance": relevance,
        }
        out.append(
            item_candidate(
                {**row, "metadata": metadata}, layer_name=layer_names.get(row["layer_id"], ""), origin="related"
            )
        )
    return out


def source_candidates(request: SourceRequest) -> tuple[list[Candidate], list[str]]:
    """Candidates from every configured source; a failing source becomes a warning (FR-010)."""
    candidates: list[Candidate] = []
    warnings: list[str] = []
    for source in configured_sources():
        try:
            candidates.extend(source.candidates(request))
        except Exception:
            log.exception("candidate source %s failed", source.name)
            warnings.append(f"{source.name} were skipped: the source failed")
    return candidates, warnings
