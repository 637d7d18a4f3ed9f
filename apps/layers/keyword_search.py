"""PostgreSQL full-text search over items: the keyword half of hybrid retrieval and the fallback
when embeddings or the vector index are unavailable.

The query's lexemes are OR-ed (any matching word counts) and ranked with ts_rank_cd, so a
question phrased in natural language still finds items that share only some of its words.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from apps.layers.filters import ItemFilters


@dataclass(frozen=True)
class KeywordHit:
    item_id: int
    rank: float


def keyword_items(*, filters: ItemFilters, query: str, limit: int) -> list[KeywordHit]:
    """Items matching any of the query's words, best first, filtered in the same statement."""
    if not query.strip() or not filters.layer_ids:
        return []
    where, params = filters.sql()
    where.append("search_vector @@ q.tsq")
    sql = (
        "WITH q AS (SELECT NULLIF(replace(plainto_tsquery('english', %s)::text, ' & ', ' | '), '')::tsquery AS tsq) "
        "SELECT id, ts_rank_cd(search_vector, q.tsq, 32) AS rank FROM layers_item, q "
        f"WHERE q.tsq IS NOT NULL AND {' AND '.join(where)} ORDER BY rank DESC, id LIMIT %s"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [query, *params, limit])
        return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in cur.fetchall()]
