"""PostgreSQL full-text search over items: the keyword half of hybrid retrieval and the fallback
when embeddings or the vector index are unavailable.

The query's lexemes are OR-ed (any matching word counts) and ranked with ts_rank_cd, so a
question phrased in natural language still finds items that share only some of its words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection


@dataclass(frozen=True)
class KeywordHit:
    item_id: int
    rank: float


def keyword_items(
    *,
    workspace_id: int,
    layer_ids: list[int],
    query: str,
    limit: int,
    kinds: list[str] | None = None,
    types: list[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[KeywordHit]:
    """Items matching any of the query's words, best first, filtered in the same statement."""
    if not query.strip() or not layer_ids:
        return []
    where = ["workspace_id = %s", "layer_id = ANY(%s)", "search_vector @@ q.tsq"]
    params: list[Any] = [workspace_id, layer_ids]
    if kinds:
        where.append("kind = ANY(%s)")
        params.append(kinds)
    if types:
        where.append("type = ANY(%s)")
        params.append(types)
    if since:
        where.append("created_at >= %s")
        params.append(since)
    if until:
        where.append("created_at <= %s")
        params.append(until)
    sql = (
        "WITH q AS (SELECT NULLIF(replace(plainto_tsquery('english', %s)::text, ' & ', ' | '), '')::tsquery AS tsq) "
        "SELECT id, ts_rank_cd(search_vector, q.tsq, 32) AS rank FROM layers_item, q "
        f"WHERE q.tsq IS NOT NULL AND {' AND '.join(where)} ORDER BY rank DESC, id LIMIT %s"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [query, *params, limit])
        return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in cur.fetchall()]
