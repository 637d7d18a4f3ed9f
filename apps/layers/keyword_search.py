"""PostgreSQL full-text search over items: the keyword half of hybrid retrieval and the fallback
when embeddings or the vector index are unavailable.

Ranking is BM25-like in one statement: the query's lexemes are OR-ed (a natural-language
question still finds items sharing only some of its words), each lexeme's document frequency
among the matches gives it an inverse-document-frequency weight, and an item scores the sum
over its matched lexemes of idf x a saturated, length-normalised term frequency. Without the
idf, a common word matched twice outranks the one rare word the question is really about.

Its cost grows with the number of matching items: a question made of common words matches a
large share of a big workspace. The statement stops at `MATCH_CAP` matches; past it a second
statement matches on the query's rarest words only (by PostgreSQL's own lexeme frequencies in
`pg_stats`), still scores every query word on those matches (the MAX_SCORED_WORDS rarest of a
longer query), and takes each word's idf from those frequencies. It scores in one pass: each
match is read once and keeps a term frequency per word, not its search_vector. Below the cap,
nothing changes: the statement is exact. A scope that passed the cap goes straight to the second
statement for a few minutes.

The rarest word alone can still match a share of the corpus (one in thirty items of the bench: 33k
at 1M items), and every match is a row read and scored. So the word that crosses the cap, when it
is expected to match more than `SCORE_CAP` items, is matched on the workspace's newest items only:
an id window sized to hold about SCORE_CAP of its matches, which the planner ANDs with the word's
postings through a btree on item_id. The rarer words are still matched in every item, and every
match is scored on every query word as before. What is bounded: an older item that holds only the
commonest chosen word is not scored (recency is the product's tie-break). A window that would reach
back past the workspace's oldest item is no window: the statement matches the word in every item (a
small workspace in a big table, whose frequencies are the table's, is searched once, not once per
widening). A scope whose items are few among the workspace's newest (an old project) widens the
window `WIDEN`-fold until it holds SCORE_CAP / 2 of its matches, or the whole workspace.

The window is read from a second GIN index whose keys are the items' lexemes tagged with their
workspace and their bucket of 4,096 ids ('bill 3 244', migration 0016): the word's keys in the
window's buckets are its matches there, ~8,000 postings, where ANDing the word's whole posting list
with the primary key's range of the window read every id of it (~300k, ~10 ms at 1M items, more when
newer items of other workspaces lie past the window's start). The window's exact start is a filter on
those matches. A window over more than MAX_BUCKETS buckets (a workspace whose ids are spread thin
among others') is the primary key's range as before.

Where a windowed statement's time went at 1M items with the btree window (the bench, EXPLAIN ANALYZE,
all buffers hit, ~24 ms for ~8,000 matches): 10 ms building the window's bitmap from the btree (~300k
ids, ~35 ns each), 3 ms the word's GIN postings (30k), 8 ms reading and scoring the matched rows
(6,500 pages), 3-4 ms the average length, the sort and the count; the bucket keys take the first two's
place at ~3 ms. A BRIN index on item_id for the window cost 0.2 ms
to read but made things worse (85 ms): the planner ANDs its lossy pages first, and the intersection
stays lossy, so every row of the window's 7,700 pages (290k) is rechecked.

Both read `layers_itemsearch` (models.ItemSearch), the items' narrow copy with the filter columns
and the vector's length, not layers_item: every match is a row read, and a narrow row shares its
page with ~40 others where an item's row (its embedding among it) shares it with ~4.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from django.db.backends.utils import CursorWrapper

from apps.core.replica_router import read_connection
from apps.layers.filters import ItemFilters

# BM25's k1: how quickly repeated occurrences of a word stop adding to the score.
K1 = 1.2
# Past this many matching items, match on the rarest query words only.
MATCH_CAP = 1000
# Past the cap, the word expected to match more than this many items is matched on the newest items
# only, about this many of them. The cost past the cap follows it: keyword search's p95 over the 300
# bench questions at 1M items was 21 / 30 / 55 ms at 3,000 / 5,000 / 8,000 (12.6 ms at 100k). At
# 5,000, 10 of the 300 questions at 100k items changed ids (their subject word, "cache" or "feature
# flags", matches ~7k there); at 8,000 none does, so 8,000 it is until ranking past it is measured.
SCORE_CAP = 8000
# How much that window grows when the scope holds fewer than half of SCORE_CAP of its matches.
WIDEN = 8
# The window's buckets of 2^BUCKET_BITS ids: the GIN index itemsearch_bucket_lexeme_gin holds each lexeme
# of an item as 'lexeme workspace bucket' (migration 0016's itemsearch_bucket_lexemes, whose 12 this is),
# so the common word in a window is read from the index as the keys of its buckets: its matches there.
BUCKET_BITS = 12
# A window over more buckets than this (a workspace whose ids are spread thin among other workspaces')
# is the primary key's range of ids ANDed with the word's postings instead.
MAX_BUCKETS = 512
# The rarest query words scored past the cap (the commonest add least to a BM25 sum).
MAX_SCORED_WORDS = 200
# How long the lexeme frequencies read from pg_stats are reused.
STATS_SECONDS = 300.0


@dataclass(frozen=True)
class KeywordHit:
    item_id: int
    rank: float


@dataclass(frozen=True)
class LexemeStats:
    """Share of all items holding each of the most common lexemes (what ANALYZE sampled)."""

    freq: dict[str, float]
    rare: float  # the share assumed for a lexeme outside `freq`
    rows: float

    def of(self, lexeme: str) -> float:
        return self.freq.get(lexeme, self.rare)


_stats: tuple[float, LexemeStats | None] = (-math.inf, None)
# Scopes (filters) whose matches passed the cap lately: their next queries skip the exact attempt.
_large_scopes: dict[ItemFilters, float] = {}
MAX_REMEMBERED_SCOPES = 4096


def _lexeme_stats() -> LexemeStats | None:
    """PostgreSQL's most-common-lexeme statistics of `search_vector`, cached a few minutes per process."""
    global _stats
    fetched_at, stats = _stats
    if time.monotonic() - fetched_at < STATS_SECONDS:
        return stats
    with read_connection().cursor() as cur:
        cur.execute(
            """
            SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples
            FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename
                 AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = s.schemaname)
            WHERE s.schemaname = current_schema() AND s.tablename = 'layers_itemsearch' AND s.attname = 'search_vector'
            """
        )
        row = cur.fetchone()
    stats = None
    if row and row[0] and row[1] and row[2] and row[2] > 0:
        elems, freqs = row[0], row[1]
        freq = dict(zip(elems, freqs[: len(elems)], strict=True))
        stats = LexemeStats(freq=freq, rare=min(freq.values()) / 2, rows=float(row[2]))
    _stats = (time.monotonic(), stats)
    return stats


def keyword_items(*, filters: ItemFilters, query: str, limit: int, corpus_size: int | None = None) -> list[KeywordHit]:
    """Items matching any of the query's words, best first, filtered in the same statement.

    `corpus_size` is the number of items in scope for the idf (the matches' count when unknown).
    One statement when the matches are at most MATCH_CAP; past it, a second on the rarest words.
    """
    if not query.strip() or not filters.layer_ids:
        return []
    where, params = filters.sql()
    conditions = " AND ".join(where)
    large_since = _large_scopes.get(filters)
    with read_connection().cursor() as cur:
        if large_since is not None and time.monotonic() - large_since < STATS_SECONDS:
            cur.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [query])
            lexemes: list[str] = cur.fetchone()[0]
            if not lexemes:
                return []
        else:
            cur.execute(
                _EXACT.format(where=conditions, k1=K1, cap=MATCH_CAP),
                [query, query, *params, corpus_size, limit, query],
            )
            rows = cur.fetchall()
            if not (rows and rows[0][0] is None):
                return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in rows]
            lexemes = rows[0][2]
            if len(_large_scopes) >= MAX_REMEMBERED_SCOPES:
                _large_scopes.clear()
            _large_scopes[filters] = time.monotonic()
        stats = _lexeme_stats()
        if stats is None:  # never analyzed: score every match
            cur.execute(
                _EXACT.format(where=conditions, k1=K1, cap="NULL"), [query, query, *params, corpus_size, limit, query]
            )
            return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in cur.fetchall()]
        # Rarest words first, until they are expected to match MATCH_CAP items (words outside the
        # statistics may match nothing, so the word that crosses the cap is kept too).
        chosen, expected = [], 0.0
        for lexeme in sorted(lexemes, key=stats.of):
            chosen.append(lexeme)
            expected += stats.of(lexeme) * stats.rows
            if expected >= MATCH_CAP:
                break
        eps = 0.5 / max(stats.rows, 1.0)
        rarest = set(sorted(lexemes, key=stats.of)[:MAX_SCORED_WORDS])
        scored = [x for x in lexemes if x in rarest]  # in the query's order, as before
        idf = [math.log(1 + (1 - stats.of(x) + eps) / (stats.of(x) + eps)) for x in scored]
        return _pruned(cur, filters, chosen, stats, scored, idf, limit)


def _pruned(
    cur: CursorWrapper,
    filters: ItemFilters,
    chosen: list[str],
    stats: LexemeStats,
    scored: list[str],
    idf: list[float],
    limit: int,
) -> list[KeywordHit]:
    """The pruned statement; the crossing word (chosen's last) matched in a window of the newest items
    when it is expected to match more than SCORE_CAP, the window widened while the scope holds few of them."""
    where, params = filters.sql()
    conditions = " AND ".join(where)
    rare, common = chosen[:-1], chosen[-1]
    share = stats.of(common)
    span = SCORE_CAP / share if share * stats.rows > SCORE_CAP else None
    ids = _id_range(cur, filters.workspace_id) if span is not None else None
    while True:
        # A window that starts at or before the workspace's oldest item holds all of it: no window.
        window = None if span is None or ids is None or span >= ids[1] - ids[0] else ids[1] - round(span)
        words, windowed = (chosen, []) if window is None else (rare, [window])
        buckets = _buckets(common, filters.workspace_id, window, ids[1]) if window is not None and ids else None
        cur.execute(
            _pruned_sql(where=conditions, words=len(scored), window=window is not None, buckets=buckets is not None),
            [words, common, *scored, *([buckets] if buckets else []), *windowed, *params, *idf, *windowed, limit],
        )
        rows = cur.fetchall()
        if window is None or (rows and rows[0][2] >= SCORE_CAP // 2):
            return [KeywordHit(item_id=row[0], rank=float(row[1])) for row in rows]
        span = (span or 0.0) * WIDEN  # the scope holds few of the workspace's newest items: look further back


def _buckets(common: str, workspace_id: int, window: int, newest: int) -> list[str] | None:
    """The keys of `common` in the buckets of the ids past `window` up to one bucket past `newest` (items
    written since it was read), as the index's function makes them; None past MAX_BUCKETS."""
    first, last = window >> BUCKET_BITS, (newest >> BUCKET_BITS) + 1
    if last - first + 1 > MAX_BUCKETS:
        return None
    return [f"{common} {workspace_id} {b}" for b in range(first, last + 1)]


def _id_range(cur: CursorWrapper, workspace_id: int) -> tuple[int, int] | None:
    """The workspace's oldest and newest item ids (a step down each end of the (workspace_id, item_id) index)."""
    cur.execute("SELECT min(item_id), max(item_id) FROM layers_itemsearch WHERE workspace_id = %s", [workspace_id])
    row = cur.fetchone()
    return None if row is None or row[0] is None else (row[0], row[1])


# The expression of the index itemsearch_bucket_lexeme_gin (models.ItemSearch), as the planner must see it.
BUCKET_KEY = "itemsearch_bucket_lexemes(search_vector, workspace_id, item_id)"


# Every match scored; each word's idf from its document frequency among the matches. Past `cap`
# matches nothing is scored: a single row (NULL, NULL, the query's lexemes) says so.
_EXACT = """
    WITH terms AS (
        SELECT DISTINCT plainto_tsquery('simple', lexeme) AS tq
        FROM unnest(tsvector_to_array(to_tsvector('english', %s))) AS lexeme
    ),
    q AS (SELECT NULLIF(replace(plainto_tsquery('english', %s)::text, ' & ', ' | '), '')::tsquery AS tsq),
    hits AS MATERIALIZED (
        SELECT item_id AS id, search_vector, length::float8 AS len FROM layers_itemsearch, q
        WHERE q.tsq IS NOT NULL AND search_vector @@ q.tsq AND {where}
        LIMIT {cap} + 1
    ),
    overflow AS (SELECT coalesce((SELECT count(*) FROM hits) > {cap}, false) AS over),
    pairs AS MATERIALIZED (
        SELECT hits.id, hits.len, ts_rank(hits.search_vector, terms.tq, 0) * 10 AS tf,
               count(*) OVER (PARTITION BY terms.tq) AS df
        FROM hits JOIN terms ON hits.search_vector @@ terms.tq, overflow
        WHERE NOT overflow.over
    ),
    stats AS (SELECT greatest(coalesce(%s, (SELECT count(*) FROM hits)), 1)::float8 AS n,
                     greatest((SELECT avg(len) FROM hits), 1) AS avglen)
    (SELECT pairs.id,
            sum(ln(1 + (stats.n - pairs.df + 0.5) / (pairs.df + 0.5))
                * (pairs.tf * ({k1} + 1)) / (pairs.tf + {k1} * (0.25 + 0.75 * pairs.len / stats.avglen)))::float8
            AS score,
            NULL::text[] AS lexemes
     FROM pairs CROSS JOIN stats
     GROUP BY pairs.id ORDER BY score DESC, pairs.id LIMIT %s)
    UNION ALL
    SELECT NULL, NULL, tsvector_to_array(to_tsvector('english', %s)) FROM overflow WHERE overflow.over
"""


# Matches on the chosen (rarest) words only; every query word scored; idf from pg_stats frequencies.
# One pass over the matches: each row keeps its length and one term frequency per word (NULL where
# the word is absent), not its search_vector, so nothing is rescanned per word and nothing grouped.
# The words' parts add up in the query's order, as a per-word sum would (an absent word adds 0).
# avglen is materialised: inlined, each word's part would average the matches again. A match's
# length norm, K1 x (0.25 + 0.75 x len / avglen), is computed once, not once per word (OFFSET 0
# keeps the planner from pulling the subquery up and pasting the expression back into each part).
def _pruned_sql(*, where: str, words: int, window: bool, buckets: bool = False) -> str:
    tfs = "".join(
        f", CASE WHEN search_vector @@ tq{i} THEN ts_rank(search_vector, tq{i}, 0) * 10 END AS tf{i}"
        for i in range(words)
    )
    queries = "".join(f", plainto_tsquery('simple', %s) AS tq{i}" for i in range(words))
    parts = " + ".join(f"coalesce(%s::float8 * (tf{i} * ({K1} + 1)) / (tf{i} + hits.norm), 0)" for i in range(words))
    if buckets:  # the word's keys in the window's buckets: exactly what the bitmap of the bucket index holds,
        # so no row computes its keys again; then the window's exact start, a filter on the rows that
        # matched no rare word (item_id + 0: not a range of the primary key, which the planner would AND in)
        common = f"OR {BUCKET_KEY} && %s::text[]) AND (item_id + 0 > %s OR search_vector @@ chosen.tsq"
    else:
        common = "OR (search_vector @@ chosen.common AND item_id > %s)" if window else ""
    in_window = "WHERE id > %s" if window else ""
    return f"""
    WITH chosen AS (
        SELECT (SELECT string_agg(plainto_tsquery('simple', lexeme)::text, ' | ')::tsquery
                FROM unnest(%s::text[]) AS lexeme) AS tsq,
               plainto_tsquery('simple', %s) AS common
    ),
    terms AS (SELECT 1 AS one{queries}),
    hits AS MATERIALIZED (
        SELECT item_id AS id, length::float8 AS len{tfs} FROM layers_itemsearch, chosen, terms
        WHERE (search_vector @@ chosen.tsq {common}) AND {where}
    ),
    stats AS MATERIALIZED (SELECT greatest((SELECT avg(len) FROM hits), 1) AS avglen)
    SELECT hits.id, ({parts})::float8 AS score, (SELECT count(*) FROM hits {in_window}) AS matched
    FROM (SELECT hits.*, {K1} * (0.25 + 0.75 * len / stats.avglen) AS norm FROM hits CROSS JOIN stats OFFSET 0) hits
    ORDER BY score DESC, hits.id LIMIT %s
"""
