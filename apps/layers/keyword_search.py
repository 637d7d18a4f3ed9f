"""PostgreSQL full-text search over items: the keyword half of hybrid retrieval and the fallback
when embeddings or the vector index are unavailable.

Ranking is BM25-like in one statement: the query's lexemes are OR-ed (a natural-language
question still finds items sharing only some of its words), each lexeme's document frequency
among the matches gives it an inverse-document-frequency weight, and an item scores the sum
over its matched lexemes of idf x a saturated, length-normalised term frequency. Without the
idf, a common word matched twice outranks the one rare word the question is really about.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from apps.layers.filters import ItemFilters

# BM25's k1: how quickly repeated occurrences of a word stop adding to the score.
K1 = 1.2


@dataclass(frozen=True)
class KeywordHit:
    item_id: int
    rank: float


def keyword_items(*, filters: ItemFilters, query: str, limit: int, corpus_size: int | None = None) -> list[KeywordHit]:
    """Items matching any of the query's words, best first, filtered in the same statement.

    `corpus_size` is the number of items in scope for the idf (the matches' count when unknown).
    """
    if not query.strip() or not filters.layer_ids:
        return []
    where, params = filters.sql()
    sql = f"""
        WITH terms AS (
            SELECT DISTINCT plainto_tsquery('simple', lexeme) AS tq
            FROM unnest(tsvector_to_array(to_tsvector('english', %s))) AS lexeme
        ),
        q AS (SELECT NULLIF(replace(plainto_tsquery('english', %s)::text, ' & ', ' | '), '')::tsquery AS tsq),
        hits AS MATERIALIZED (
            SELECT id, search_vector, length(search_vector) AS len FROM layers_item, q
            WHERE q.tsq IS NOT NULL AND search_vector @@ q.tsq AND {" AND ".join(where)}
        ),
        df AS (
            SELECT terms.tq, count(hits.id) AS n FROM terms JOIN hits ON hits.search_vector @@ terms.tq
            GROUP BY terms.tq
        ),
        stats AS (SELECT greatest(coalesce(%s, (SELECT count(*) FROM hits)), 1) AS n,
                         greatest((SELECT avg(len) FROM hits), 1) AS avglen)
        SELECT hits.id,
               sum(ln(1 + (stats.n - df.n + 0.5) / (df.n + 0.5))
                   * (ts_rank(hits.search_vector, df.tq, 0) * 10 * ({K1} + 1))
                   / (ts_rank(hits.search_vector, df.tq, 0) * 10 + {K1} * (0.25 + 0.75 * hits.len / stats.avglen)))
               AS score
        FROM hits JOIN df ON hits.search_vector @@ df.tq CROSS JOIN stats
        GROUP BY hits.id ORDER BY score DESC, hits.id LIMIT %s
    """
    with connection.cursor() as cur:
        cur.execute(sql, [query, query, *params, corpus_size, limit])
        return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in cur.fetchall()]
