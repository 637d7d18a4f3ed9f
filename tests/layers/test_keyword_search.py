"""Keyword search: exact BM25 below the match cap, bounded work on the rarest words above it."""

from __future__ import annotations

import math

import pytest
from django.db import connection

from apps.layers import keyword_search
from apps.layers.filters import ItemFilters
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant, make_tenant

# 24 items with "alpha", 12 of them also "beta", 3 items with the rare "zanzibar" too, one "beta" only.
TEXTS = (
    [f"Alpha notes number {n} about deployment." for n in range(12)]
    + [f"Alpha and beta notes number {n} about deployment." for n in range(12)]
    + [f"Zanzibar runbook {n}: alpha and beta steps." for n in range(3)]
    + ["Beta only note."]
)


@pytest.fixture
def corpus(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> tuple[ItemFilters, dict[int, str]]:
    items = items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in TEXTS])
    with connection.cursor() as cur:
        cur.execute("ANALYZE layers_itemsearch")
    monkeypatch.setattr(keyword_search, "_stats", (-math.inf, None))  # forget statistics read by earlier tests
    monkeypatch.setattr(keyword_search, "_large_scopes", {})
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    return filters, {item.pk: item.content for item in items}


def test_below_the_cap_every_match_is_scored_and_the_rare_word_wins(
    corpus: tuple[ItemFilters, dict[int, str]], django_assert_num_queries
) -> None:  # type: ignore[no-untyped-def]
    filters, content = corpus
    with django_assert_num_queries(1):
        hits = keyword_search.keyword_items(filters=filters, query="zanzibar alpha", limit=50)
    assert len(hits) == 27  # every item with alpha or zanzibar
    assert all(content[h.item_id].startswith("Zanzibar") for h in hits[:3])
    assert hits[0].rank > hits[3].rank


def test_past_the_cap_only_the_rarest_words_are_matched_but_all_are_scored(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch, django_assert_num_queries
) -> None:  # type: ignore[no-untyped-def]
    filters, content = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    # the capped exact attempt, the lexeme statistics (then cached), the pruned statement
    with django_assert_num_queries(3) as first:
        hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta alpha", limit=50)
    assert "LIMIT 5 + 1" in " ".join(q["sql"] for q in first.captured_queries)
    texts = [content[h.item_id] for h in hits]
    # zanzibar (rarest), then beta, which crosses the cap; alpha-only items are not matched
    assert len(hits) == 16 and not any(t.startswith("Alpha notes") for t in texts)
    assert all(t.startswith("Zanzibar") for t in texts[:3])
    assert "Beta only note." in texts
    # the scope is known to be large and the statistics are cached: the query's lexemes, the pruned statement
    with django_assert_num_queries(2) as captured:
        assert keyword_search.keyword_items(filters=filters, query="zanzibar beta alpha", limit=50) == hits
    assert "LIMIT 5 + 1" not in " ".join(q["sql"] for q in captured.captured_queries)


def test_past_the_cap_without_statistics_every_match_is_scored(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, _ = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    with connection.cursor() as cur:  # as before the first ANALYZE (PostgreSQL 18; rolled back after the test)
        cur.execute("SELECT pg_clear_attribute_stats(current_schema(), 'layers_itemsearch', 'search_vector', false)")
    hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta alpha", limit=50)
    assert len(hits) == 28


def test_a_query_without_words_or_matches_finds_nothing(corpus: tuple[ItemFilters, dict[int, str]]) -> None:
    filters, _ = corpus
    assert keyword_search.keyword_items(filters=filters, query="the of and", limit=10) == []
    assert keyword_search.keyword_items(filters=filters, query="quixotic", limit=10) == []


# The pruned statement as it was before it became one pass: one row per (match, word), summed per
# item. The one-pass statement must rank and score as this does.
_PER_WORD_REFERENCE = """
    WITH terms AS (
        SELECT plainto_tsquery('simple', t.lexeme) AS tq, t.idf FROM unnest(%s::text[], %s::float8[]) AS t(lexeme, idf)
    ),
    chosen AS (
        SELECT string_agg(plainto_tsquery('simple', lexeme)::text, ' | ')::tsquery AS tsq
        FROM unnest(%s::text[]) AS lexeme
    ),
    hits AS MATERIALIZED (
        SELECT id, search_vector, length(search_vector) AS len FROM layers_item, chosen
        WHERE search_vector @@ chosen.tsq AND workspace_id = %s AND layer_id = ANY(%s)
    ),
    pairs AS MATERIALIZED (
        SELECT hits.id, hits.len, terms.idf, ts_rank(hits.search_vector, terms.tq, 0) * 10 AS tf
        FROM hits JOIN terms ON hits.search_vector @@ terms.tq
    ),
    stats AS (SELECT greatest((SELECT avg(len) FROM hits), 1) AS avglen)
    SELECT pairs.id, sum(pairs.idf * (pairs.tf * 2.2) / (pairs.tf + 1.2 * (0.25 + 0.75 * pairs.len / stats.avglen)))
    FROM pairs CROSS JOIN stats GROUP BY pairs.id ORDER BY 2 DESC, pairs.id
"""


@pytest.mark.parametrize(
    "query", ["zanzibar beta alpha", "beta alpha deployment notes", "zanzibar alpha notes", "beta only note"]
)
def test_past_the_cap_the_one_pass_statement_scores_as_a_sum_per_word(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    filters, _ = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    executed: list[list[object]] = []

    def spy(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if "chosen AS" in sql:
            executed.append(list(params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        hits = keyword_search.keyword_items(filters=filters, query=query, limit=50)
    (params,) = executed
    # chosen, the crossing word, words..., workspace, layers, idfs..., limit (no window below SCORE_CAP)
    chosen, words = params[0], (len(params) - 5) // 2
    lexemes, idf = params[2 : 2 + words], params[4 + words : 4 + 2 * words]
    with connection.cursor() as cur:
        cur.execute(_PER_WORD_REFERENCE, [lexemes, idf, chosen, filters.workspace_id, list(filters.layer_ids)])
        reference = cur.fetchall()
    assert hits and [h.item_id for h in hits] == [row[0] for row in reference]
    assert [h.rank for h in hits] == pytest.approx([row[1] for row in reference], rel=1e-12)


def test_past_the_cap_only_the_rarest_words_up_to_the_limit_are_scored(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "MAX_SCORED_WORDS", 1)
    hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta alpha", limit=50)
    # beta still matches (it crosses the cap) but only zanzibar scores: the beta-only items score 0
    assert len(hits) == 16 and all(content[h.item_id].startswith("Zanzibar") for h in hits[:3])
    assert hits[2].rank > 0 and all(h.rank == 0 for h in hits[3:])


def _newer(tenant: Tenant, texts: list[str], layer: Layer | None = None) -> list[int]:
    """Items written after the corpus (newer ids), the statistics read again."""
    items = items_create(
        layer=layer or tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in texts]
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE layers_itemsearch")
    keyword_search._stats = (-math.inf, None)  # the fixture's monkeypatch restores it after the test
    return [item.pk for item in items]


def test_past_the_score_cap_the_common_word_is_matched_on_the_newest_items_only(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 4)
    hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta alpha", limit=50)
    # beta (16 items) is expected past SCORE_CAP: it is matched on a window of the newest ~7 ids
    # (4 / its share of 16/28), so 7 rows are scored where every beta item (16) was before
    newest = sorted(content)[-7:]
    assert sorted(h.item_id for h in hits) == newest
    assert all(content[h.item_id].startswith("Zanzibar") for h in hits[:3])


def test_past_the_score_cap_the_rare_words_are_matched_in_every_item(
    tenant: Tenant, corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    later = _newer(tenant, [f"Beta release {n}." for n in range(20)])
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 4)
    hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta", limit=50)
    # zanzibar (3, older) is matched wherever it is; beta (36 of 48) only in the newest ~5 ids
    zanzibar = {i for i, text in content.items() if text.startswith("Zanzibar")}
    assert {h.item_id for h in hits[:3]} == zanzibar
    assert {h.item_id for h in hits[3:]} == set(later[-5:])


def test_a_scope_of_older_items_widens_the_window_until_it_holds_enough_matches(
    tenant: Tenant, corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    other = Layer.objects.create(workspace=tenant.workspace, kind="project", name="elsewhere", parent=tenant.root)
    _newer(tenant, [f"Beta release {n}." for n in range(20)], layer=other)  # newer, outside the scope
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 4)
    executed: list[str] = []
    with connection.execute_wrapper(lambda execute, sql, *rest: executed.append(sql) or execute(sql, *rest)):
        hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta", limit=50)
    # the first window (the newest ~5 ids) holds none of the scope's beta items; the next, 8x wider, all
    assert sum("chosen AS" in sql for sql in executed) == 2
    assert {h.item_id for h in hits} == {i for i, text in content.items() if "eta" in text or "Zanzibar" in text}


def test_a_small_workspace_among_many_items_is_searched_without_a_window(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    busy = make_tenant("busy")
    items_create(
        layer=busy.root, items=[ItemInput(kind="memory", type="fact", content=f"Beta {n}.") for n in range(200)]
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE layers_itemsearch")
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 100)
    executed: list[str] = []
    with connection.execute_wrapper(lambda execute, sql, *rest: executed.append(sql) or execute(sql, *rest)):
        hits = keyword_search.keyword_items(filters=filters, query="zanzibar beta", limit=50)
    # beta, in 216 of the table's 228 items, is expected past SCORE_CAP: its window would be the newest ~106
    # ids, and the workspace spans 28: one statement over all of it, not a window widened until it does
    (pruned,) = [sql for sql in executed if "chosen AS" in sql]
    assert "item_id >" not in pruned
    assert {h.item_id for h in hits} == {i for i, text in content.items() if "eta" in text or "Zanzibar" in text}


def _pruned_statements(filters: ItemFilters, query: str) -> tuple[list[keyword_search.KeywordHit], list[tuple]]:  # type: ignore[type-arg]
    """The hits, and each pruned statement run for them with its parameters."""
    executed: list[tuple] = []  # type: ignore[type-arg]

    def spy(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if "chosen AS" in sql:
            executed.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        hits = keyword_search.keyword_items(filters=filters, query=query, limit=50)
    return hits, executed


def test_the_window_is_read_from_the_bucket_index(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, content = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 4)
    hits, [(sql, params)] = _pruned_statements(filters, "zanzibar beta alpha")
    assert sorted(h.item_id for h in hits) == sorted(content)[-7:]  # the same newest 7 as the btree window
    with connection.cursor() as cur:  # a 28-row table is read whole, or along the workspace's btree, unless told
        cur.execute("SET LOCAL enable_seqscan = off")  # otherwise (the drop is rolled back with the test)
        cur.execute("DROP INDEX itemsearch_workspace_item")
        for cost in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"):
            cur.execute(f"SET LOCAL {cost} = 0")  # parallel workers as cheap as can be
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
    # the common word in the window's buckets: the bucket index, not the btree's range of ids
    assert "itemsearch_bucket_lexeme_gin" in plan and "item_id > " not in plan.split("Index Cond")[-1]
    assert "Parallel" not in plan  # the search table is never scanned by parallel workers


def test_a_window_over_too_many_buckets_is_a_btree_range_with_the_same_hits(
    corpus: tuple[ItemFilters, dict[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    filters, _ = corpus
    monkeypatch.setattr(keyword_search, "MATCH_CAP", 5)
    monkeypatch.setattr(keyword_search, "SCORE_CAP", 4)
    in_buckets, [(bucketed, _)] = _pruned_statements(filters, "zanzibar beta alpha")
    monkeypatch.setattr(keyword_search, "MAX_BUCKETS", 1)
    in_range, [(ranged, _)] = _pruned_statements(filters, "zanzibar beta alpha")
    assert keyword_search.BUCKET_KEY in bucketed and keyword_search.BUCKET_KEY not in ranged
    assert in_range == in_buckets


@pytest.mark.parametrize(
    ("workspace_id", "item_id"), [(1, 1), (7, 4_095), (7, 4_096), (2**31 + 5, 2**40 + 3), (2**62, 2**63 - 1)]
)
@pytest.mark.django_db
def test_the_bucket_keys_are_the_index_functions_keys(workspace_id: int, item_id: int) -> None:
    keys = keyword_search._buckets("bill", workspace_id, item_id - 1, item_id)
    assert keys is not None
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {keyword_search.BUCKET_KEY} && %s::text[], {keyword_search.BUCKET_KEY} "
            "FROM (SELECT to_tsvector('english', 'billing of the bills') AS search_vector, "
            "%s::int8 AS workspace_id, %s::int8 AS item_id) AS item",
            [keys, workspace_id, item_id],
        )
        overlaps, own = cur.fetchone()
    assert overlaps is True and own == [f"bill {workspace_id} {item_id >> 12}"]
