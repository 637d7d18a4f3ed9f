"""The SQL vector search sends (apps/layers/vectors.py, apps/layers/filters.py): exact literals; an exact scan
for a small scope, the HNSW index with a wide candidate list for a mid-size one, with the settings' for a large one."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.core import embeddings
from apps.layers import vectors
from apps.layers.embedder import items_embed_pending
from apps.layers.filters import ItemFilters, id_array
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create
from apps.layers.vectors import (
    HNSW_INDEX,
    VectorStrategy,
    nearest_items,
    parse_db_vector,
    search_strategy,
    vector_literal,
)
from tests.support.tenants import Tenant


def awkward_float32s(dimensions: int) -> np.ndarray:
    """Floats whose shortest decimal needs all 9 digits, the extremes of float32 and its subnormals."""
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**32, size=dimensions, dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = np.where(np.isfinite(bits), bits, np.float32(1.0)).astype(np.float32)
    extremes = np.array(
        [np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1e-45, -1e-45, 0.1, -0.0, 1 / 3, 16777217.0],
        dtype=np.float32,
    )
    values[: len(extremes)] = extremes
    return values


def test_id_arrays_are_one_array_literal() -> None:
    assert id_array([3, 1, 2]) == "{3,1,2}"
    assert id_array([]) == "{}"
    assert ItemFilters(workspace_id=1, layer_ids=(7, 8)).sql() == (
        ["workspace_id = %s", "layer_id = ANY(%s::bigint[])"],
        [1, "{7,8}"],
    )


@pytest.mark.django_db
def test_a_float32_vector_reads_back_as_itself() -> None:
    # pgvector stores float32 and parses each number with strtof: 9 digits must land on the same float.
    vector = awkward_float32s(384)
    with connection.cursor() as cur:
        cur.execute("SELECT %s::vector::text", [vector_literal(vector)])
        stored = parse_db_vector(cur.fetchone()[0])
    assert stored is not None
    assert stored.tobytes() == vector.tobytes()
    # the same vector as the exact repr of each float, which pgvector was sent before
    with connection.cursor() as cur:
        cur.execute("SELECT %s::vector = %s::vector", [vector_literal(vector), vector_literal(vector.astype(float))])
        assert cur.fetchone()[0] is True


def searched(tenant: Tenant) -> tuple[list[int], list[int], np.ndarray]:
    """Two items in the root layer and one in another, embedded; and a query vector near the first."""
    other = Layer.objects.create(workspace=tenant.workspace, parent=tenant.root, kind="project", name="other")
    items = items_create(
        layer=tenant.root,
        items=[ItemInput(kind="memory", type="fact", content=t) for t in ("Backups are kept 35 days.", "Tea.")],
    )
    hidden = items_create(layer=other, items=[ItemInput(kind="memory", type="fact", content="Backups: 35 days.")])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    return [i.pk for i in items], [i.pk for i in hidden], embeddings.embed_query("how long are backups kept")[0]


def vector_statement(filters: ItemFilters, vector: np.ndarray) -> tuple[list[tuple[int, float]], str]:
    with CaptureQueriesContext(connection) as queries:
        hits = nearest_items(filters=filters, query_vector=vector, limit=10)
    (sql,) = [q["sql"] for q in queries.captured_queries if "<=>" in q["sql"]]
    return [(h.item_id, h.similarity) for h in hits], sql


def plan_of(sql: str) -> str:
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SET LOCAL enable_sort = off")  # a test table is small enough to sort
        cur.execute("EXPLAIN " + sql)
        return "\n".join(row[0] for row in cur.fetchall())


@pytest.mark.django_db
def test_a_large_scope_walks_the_hnsw_index_and_a_small_one_is_searched_exactly(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown, hidden, vector = searched(tenant)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    exact, exact_sql = vector_statement(filters, vector)
    assert [item for item, _ in exact] == shown  # not the other layer's item
    assert exact[0][1] > exact[1][1]
    assert exact_sql.count("::vector") == 1 and HNSW_INDEX not in plan_of(exact_sql)

    monkeypatch.setattr(vectors, "EXACT_SEARCH_MAX_ITEMS", 1)
    monkeypatch.setattr(vectors, "_scope_sizes", {})
    approximate, hnsw_sql = vector_statement(filters, vector)
    assert approximate == exact and hidden[0] not in {item for item, _ in approximate}
    assert hnsw_sql.count("::vector") == 1 and f"Index Scan using {HNSW_INDEX}" in plan_of(hnsw_sql)


@pytest.mark.django_db
def test_a_scopes_size_is_counted_once_a_while(tenant: Tenant) -> None:
    _, _, vector = searched(tenant)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            nearest_items(filters=filters, query_vector=vector, limit=10)
    counts = [q["sql"] for q in queries.captured_queries if "count(*)" in q["sql"]]
    assert len(counts) <= 1 and len(queries.captured_queries) - len(counts) == 3


def test_the_scope_size_picks_the_strategy() -> None:
    exact, wide = vectors.EXACT_SEARCH_MAX_ITEMS, vectors.WIDE_SEARCH_MAX_ITEMS
    assert 0 < exact < wide < vectors.SCOPE_COUNT_LIMIT  # the count reaches past every threshold
    assert [search_strategy(scope_size=n) for n in (0, 1, exact)] == [VectorStrategy.EXACT] * 3
    assert [search_strategy(scope_size=n) for n in (exact + 1, wide)] == [VectorStrategy.WIDE] * 2
    assert [search_strategy(scope_size=n) for n in (wide + 1, 10**7)] == [VectorStrategy.ITERATIVE] * 2


@pytest.mark.django_db
def test_a_mid_size_scope_walks_the_index_with_a_wider_candidate_list(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, hidden, vector = searched(tenant)
    filters = ItemFilters(workspace_id=tenant.workspace.pk, layer_ids=(tenant.root.pk,))
    exact, _ = vector_statement(filters, vector)
    monkeypatch.setattr(vectors, "EXACT_SEARCH_MAX_ITEMS", 1)
    for wide_up_to, widened in ((10, True), (1, False)):
        monkeypatch.setattr(vectors, "WIDE_SEARCH_MAX_ITEMS", wide_up_to)
        monkeypatch.setattr(vectors, "_scope_sizes", {})
        with CaptureQueriesContext(connection) as queries:
            hits = nearest_items(filters=filters, query_vector=vector, limit=10)
        sent = [q["sql"] for q in queries.captured_queries]
        assert (f"SET LOCAL hnsw.ef_search = {vectors.WIDE_EF_SEARCH}" in sent) is widened, sent
        assert [(h.item_id, h.similarity) for h in hits] == exact and hidden[0] not in {h.item_id for h in hits}
