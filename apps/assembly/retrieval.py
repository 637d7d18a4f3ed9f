"""The reads behind the gather pipeline's built-in sources (apps/assembly/sources/): hybrid search
hits and pinned items, the turns next to them, the conversation window, layer summaries and
related items.

Each part is one statement whatever the workspace size; embeddings are never loaded here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Q
from psycopg.types.datetime import TimestamptzLoader

from apps.assembly.adjacency import ADJACENT_SQL, NEIGHBOUR_SEED_RANK
from apps.assembly.deadline import Deadline
from apps.assembly.degraded import Degraded, degraded
from apps.assembly.timings import StageTimes
from apps.core import embeddings
from apps.core.prepared import prepared_cursor
from apps.core.stored_vectors import similarity
from apps.engine import Candidate, Rung
from apps.engine.candidates import ITEM_FIELDS, item_candidate, item_row, search_origin
from apps.engine.floor import HitFloor
from apps.layers.branch import branch_sql
from apps.layers.filters import ItemFilters, id_array
from apps.layers.hybrid_search import hybrid_search
from apps.layers.models import Item, Relationship
from apps.layers.statement_timeout import SearchTimedOut, statement_timeout
from apps.summaries.selectors import member_id, summaries_for_layers

log = logging.getLogger(__name__)

ROW_FIELDS = (*ITEM_FIELDS, "parent_id")
# The row columns in raw SQL on layers_item (aliased `i`), in ROW_FIELDS order.
_ROW_COLUMNS = ", ".join(f"i.{f}" for f in ROW_FIELDS)
_ITEM_COLUMNS = ", ".join(f"i.{f}" for f in ITEM_FIELDS)
SUMMARY_ORDER = ("detailed", "paragraph", "sentence")
RELATED_MAX_EDGES = 10_000  # edges read per hop of related expansion
RELATED_FLOOR_MS = 50  # however late, a hop gets this long
# Window messages this important keep full detail at any distance (apps/conversations/importance.py).
FULL_DETAIL_IMPORTANCE = 0.9


@dataclass(frozen=True)
class Hits:
    """The search hits and pinned items, with what the search leaves for the gatherers after it."""

    candidates: list[Candidate]
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # candidates that could not be built ("item 12")
    floor: HitFloor = field(default_factory=HitFloor)  # the query's best hits (engine/floor.py)
    query_vector: np.ndarray | None = None  # the query's vector, for the candidates no search returns
    parent_of: dict[int, int] = field(default_factory=dict)  # message hit → the turn it answers


def _build(row: dict[str, Any], skipped: list[str], **fields: Any) -> Candidate | None:
    """`item_candidate(row, **fields)`, or None (named in `skipped`) when the row cannot make one."""
    try:
        return item_candidate(row, **fields)
    except Exception:  # noqa: BLE001 - one row never fails the request
        log.warning("item %s left out: its candidate could not be built", row.get("id"), exc_info=True)
        skipped.append(f"item {row.get('id')}")
        return None


def search_hits(
    *,
    filters: ItemFilters,
    layer_names: dict[int, str],
    query: str,
    query_vector: np.ndarray | None | Callable[[], np.ndarray | None],  # callable: still being computed
    limit: int,
    deadline: Deadline | None = None,
    timings: StageTimes | None = None,
) -> Hits:
    """Search hits (the shared hybrid search, apps/layers/hybrid_search.py; fused later by rank with
    the request's weights) and pinned items.

    With a deadline, each search runs with a statement timeout of the time left and is skipped
    (and named in `deadline.skipped`) when none is left; keyword search always gets a floor.
    """
    deadline = deadline or Deadline(limit_ms=None)
    found = hybrid_search(
        filters=filters, query=query, query_vector=query_vector, limit=limit, deadline=deadline, timings=timings
    )
    warnings = tuple(
        degraded(Degraded.SEARCH_FAILED, f"the {search} failed; this context comes from the rest")
        for search in found.failed
    )
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
    candidates: list[Candidate] = []
    skipped: list[str] = []
    parent_of: dict[int, int] = {}
    for values in fetched:
        row = item_row(ROW_FIELDS, values)
        parent = row.pop("parent_id")
        if parent and row["kind"] == "message":
            parent_of[row["id"]] = parent
        v_rank, v_sim = vector_by_id.get(row["id"], (None, None))
        k_rank, k_score = keyword_by_id.get(row["id"], (None, None))
        candidate = _build(
            row,
            skipped,
            layer_name=layer_names.get(row["layer_id"], ""),
            origin=search_origin(vector_rank=v_rank, keyword_rank=k_rank, pinned=row["pinned"]),
            vector_similarity=v_sim,
            vector_rank=v_rank,
            keyword_score=k_score,
            keyword_rank=k_rank,
        )
        if candidate is not None:
            candidates.append(candidate)
    floor = HitFloor.of(
        similarities=(h.similarity for h in found.vector), keyword_scores=(h.rank for h in found.keyword)
    )
    return Hits(candidates, warnings, tuple(skipped), floor, found.query_vector, parent_of)


def off_branch(candidates: dict[int, Candidate], path: list[dict[str, Any]], window: set[int]) -> list[Candidate]:
    """Take out of `candidates` the conversation's turns said since the oldest turn of the window's
    path but not on it: they belong to another branch (or come after the message compiled from)."""
    on_path = {row["id"] for row in path}
    since = min(row["created_at"] for row in path)
    out = [
        c
        for c in candidates.values()
        if c.kind == "message" and c.layer_id in window and c.id not in on_path and c.created_at >= since
    ]
    for c in out:
        del candidates[c.id]
    return out


def add_window(
    candidates: dict[int, Candidate],
    workspace_id: int,
    layer_ids: tuple[int, ...],
    size: int,
    layer_names: dict[int, str],
    skipped: list[str],
    start: int | None = None,
    floor: HitFloor | None = None,
) -> list[dict[str, Any]]:
    """The turns of the conversation's branch back from `start` (default: the newest), with their
    distance from it; returns their rows.

    A strong search hit (engine/floor.py: near the query's best hits) keeps its full ladder whatever
    its distance: it was asked for; so does an important turn (a decision, a user-marked message:
    an important turn keeps its full text at any distance). Every other turn of the window, a weak hit or a hit's
    neighbour included, gets its distance, and the preset decides its detail; a weak hit said
    before the walk's oldest turn is beyond the title distance (hidden)."""
    floor = floor or HitFloor()
    rows = _window(workspace_id, layer_ids, size, start)
    for distance, row in enumerate(rows):
        kept = row["importance"] >= FULL_DETAIL_IMPORTANCE
        found = candidates.get(row["id"])
        if found is not None:
            if not kept and found.distance is None and not floor.strong(found):
                candidates[row["id"]] = replace(found, distance=distance)
        else:
            candidate = _build(
                row,
                skipped,
                layer_name=layer_names.get(row["layer_id"], ""),
                origin="conversation",
                distance=None if kept else distance,
            )
            if candidate is not None:
                candidates[row["id"]] = candidate
    if len(rows) == size:  # the turns of the conversation said before the walk's oldest are farther still
        oldest = min(row["created_at"] for row in rows)
        window = set(layer_ids)
        for key, c in list(candidates.items()):
            if (
                c.kind == "message"
                and c.layer_id in window
                and c.distance is None
                and c.created_at < oldest
                and not c.pinned
                and c.importance < FULL_DETAIL_IMPORTANCE
                and not floor.strong(c)
            ):
                candidates[key] = replace(c, distance=size)
    return rows


def neighbour_turns(
    candidates: dict[int, Candidate],
    parent_of: dict[int, int],
    filters: ItemFilters,
    layer_names: dict[int, str],
    seed_rank: int = NEIGHBOUR_SEED_RANK,
    skipped: list[str] | None = None,
) -> list[Candidate]:
    """The turn a retrieved message answers, the replies to it, and the turns said just before
    and after the top hits (the first `seed_rank` of either search) come along (one statement:
    the adjacency query is a CTE of the fetch of the rows).

    A question's answer often sits in the short turn next to the one that matched ("Weigh-in
    this morning: 79.5 kg." beside the assistant's reply about it). Neighbours rank right behind
    their hit (see rank.relevance_by_position).
    """
    messages = [c for c in candidates.values() if c.kind == "message" and (c.vector_rank or c.keyword_rank)]
    if not messages:
        return []
    # Only the top hits bring their parent and replies, as they bring the turns said next to them:
    # now that a message without a parent follows the previous turn (layers.services), every turn has
    # one, and the parents and replies of all hits were the neighbours of all hits, which crowd the
    # weaker hits out of a small budget (README, Benchmarks).
    seeds = [
        c.id for c in messages if min(c.vector_rank or seed_rank + 1, c.keyword_rank or seed_rank + 1) <= seed_rank
    ]
    hits = seeds
    hit_set = set(hits)
    wanted_parents = {parent_of[h]: h for h in hits if h in parent_of}
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
    out: list[Candidate] = []
    for values in fetched:
        row = item_row(ROW_FIELDS, values)
        adjacent_seed = values[-1]
        parent = row.pop("parent_id")
        if row["id"] in candidates:
            continue
        via = parent if parent in hit_set else wanted_parents.get(row["id"], adjacent_seed)
        if via is None:
            continue
        candidate = _build(
            row,
            [] if skipped is None else skipped,
            layer_name=layer_names.get(row["layer_id"], ""),
            origin="neighbour",
            neighbour_of=via,
        )
        if candidate is not None:
            out.append(candidate)
    return out


def _window(workspace_id: int, layer_ids: tuple[int, ...], size: int, start: int | None = None) -> list[dict[str, Any]]:
    """The conversation's branch: `size` messages back from `start` (default: the newest message),
    nearest first, each followed to its parent, or, for a message written
    without one, to the turn said just before it (raw SQL, one statement: a recursive walk of
    at most `size` index lookups).

    A turn on another branch (said after the fork, on a path that does not lead to `start`) is not
    on the walk, so an abandoned branch never takes the place of the current one's turns.
    The statement is the item table's owner's (apps/layers/branch.py).
    """
    sql = branch_sql(columns=_ITEM_COLUMNS, layers=len(layer_ids), from_newest=start is None)
    first_params = [start] if start is not None else [workspace_id, *layer_ids]
    params = [*first_params, workspace_id, *layer_ids, size, workspace_id]
    return [item_row(ITEM_FIELDS, values) for values in _fetch_rows(sql, params)]


def _fetch_rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of a raw item statement, `created_at` (the column after `external_id`) in UTC.

    Django registers a pure-Python timestamptz loader on every connection (3.5 us a value); the
    cursor gets psycopg's C loader instead (0.4 us), whose datetimes are in the session's time zone.
    """
    with prepared_cursor(connection) as cur:  # the same few statements on every request (apps/core/prepared.py)
        cur.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cur.execute(sql, params)
        fetched = cur.fetchall()
    at = ROW_FIELDS.index("created_at")
    return [(*values[:at], values[at].astimezone(UTC), *values[at + 1 :]) for values in fetched]


def layer_summaries(
    *,
    workspace_id: int,
    layer_ids: Iterable[int],
    layer_names: dict[int, str],
    user: str = "",
    query_vector: np.ndarray | None = None,
) -> list[Candidate]:
    """One candidate per layer with summaries, its rungs detailed → paragraph → sentence.

    Read through the summary cache (PostgreSQL on a miss); `user` (a member's username) gets their
    personalized summaries where they exist, the generic ones elsewhere. `layer_ids` are the
    workspace's own (the caller scoped them). With a query vector, a candidate's similarity to the
    query is its closest depth's (summaries/vectors.py), so rank places it like an item and the
    floor may leave it out; without one, or before its rows are embedded, it has none.
    """
    user_id = member_id(workspace_id=workspace_id, username=user) if user else None
    by_layer: dict[int, dict[str, Any]] = {}
    for layer_id, rows in summaries_for_layers(layer_ids=layer_ids, user_id=user_id).items():
        for row in rows:
            by_layer.setdefault(layer_id, {})[row["depth"]] = row
    model = embeddings.model_label() if query_vector is not None and by_layer else ""
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
                stale=any(d["stale"] for d in depths.values()),
                metadata={"personalized": any(d["personalized_for_id"] for d in depths.values())},
                vector_similarity=_closest(query_vector, model, depths.values()),
            )
        )
    return candidates


def _closest(query_vector: np.ndarray | None, model: str, rows: Iterable[dict[str, Any]]) -> float | None:
    """The highest similarity to the query among rows embedded by `model` (None: none is)."""
    if query_vector is None:
        return None
    found = [similarity(query_vector, row.get("embedding")) for row in rows if row.get("embedding_model") == model]
    return max((s for s in found if s is not None), default=None)


def related_items(
    *,
    seeds: dict[int, float],
    filters: ItemFilters,
    layer_names: dict[int, str],
    depth: int,
    skipped: list[str] | None = None,
    deadline: Deadline | None = None,
) -> list[Candidate]:
    """Items reachable from `seeds` (id → relevance) along relationships, up to `depth` hops.

    A related item inherits half its neighbour's relevance per hop; already-known items are skipped.
    Each hop reads at most RELATED_MAX_EDGES edges, checks the deadline first and runs within the
    time it has left (at least RELATED_FLOOR_MS): a hop past it is named in `deadline.skipped` and
    the items found so far are kept.
    """
    deadline = deadline or Deadline(limit_ms=None)
    known = set(seeds)
    frontier = dict(seeds)
    found: dict[int, tuple[float, int, int]] = {}  # id → (inherited relevance, hop, via)
    for hop in range(1, depth + 1):
        if not frontier:
            break
        left = deadline.remaining_ms()
        if left is not None and left <= 0:
            deadline.skip(f"related items {hop} or more hops away")
            break
        query = Relationship.objects.filter(
            Q(source_id__in=list(frontier)) | Q(target_id__in=list(frontier)), workspace_id=filters.workspace_id
        ).values_list("source_id", "target_id")[:RELATED_MAX_EDGES]
        try:
            with statement_timeout(None if left is None else max(left, RELATED_FLOOR_MS)):
                edges = list(query)
        except SearchTimedOut:
            deadline.skip(f"related items {hop} or more hops away")
            break
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
    out: list[Candidate] = []
    skipped = [] if skipped is None else skipped
    for row in rows:
        relevance, hop, via = found[row["id"]]
        candidate = _build(
            row,
            skipped,
            layer_name=layer_names.get(row["layer_id"], ""),
            origin="related",
            related_via=via,
            related_hops=hop,
            inherited_relevance=relevance,
        )
        if candidate is not None:
            out.append(candidate)
    return out
