"""Each search, source and candidate is isolated: one that fails is left out with a typed warning
(counted in /metrics), and the context comes from the rest (issue 25, finding 2)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings

from apps.core import tokenizer
from apps.engine import Candidate, RankContext, Scored, assemble, rank, weighted_score
from apps.metrics.registry import ASSEMBLY_PARTS_SKIPPED
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def skipped(part: str) -> float:
    return float(ASSEMBLY_PARTS_SKIPPED.labels(part=part)._value.get())


def _session_with_a_pinned_fact(tenant: Tenant) -> int:
    session = layer(tenant, "session", tenant.root.pk, external_id="s1")
    bulk(
        tenant,
        session,
        [
            {"kind": "message", "role": "user", "content": "Otters swim in the brook."},
            {"kind": "message", "role": "assistant", "content": "They hold hands while sleeping."},
            {"kind": "memory", "type": "fact", "content": "The brook freezes in January.", "pinned": True},
        ],
    )
    return session


@pytest.mark.django_db
def test_with_the_keyword_search_table_gone_context_comes_from_the_rest(tenant: Tenant) -> None:
    session = _session_with_a_pinned_fact(tenant)
    before = skipped("search")
    with connection.cursor() as cur:  # undone with the test's transaction
        cur.execute("ALTER TABLE layers_itemsearch RENAME TO layers_itemsearch_away")
    body = ask(tenant, layer=session, query="otters brook", token_budget=500)
    assert "The brook freezes in January." in body["context"] and "Otters swim in the brook." in body["context"]
    assert any(w.startswith("search_failed: the keyword search failed") for w in body["warnings"]), body["warnings"]
    assert skipped("search") == before + 1
    history = tenant.client.get("/api/v1/history/", {"layer": session, "query": "otters"})
    assert history.status_code == 200
    assert any(w.startswith("search_failed:") for w in history.json()["warnings"])


@pytest.mark.django_db(transaction=True)  # the embedder's thread sees the items
def test_a_query_vector_of_another_dimension_than_the_column_leaves_keyword_search(
    tenant: Tenant, wait_background: Callable[[], None]
) -> None:
    session = _session_with_a_pinned_fact(tenant)
    wait_background()  # the items have vectors to compare with
    with override_settings(EMBEDDING_DIMENSIONS=256):  # a configuration that disagrees with the column
        vector = [float(x) for x in np.random.default_rng(1).random(256)]
        body = ask(tenant, layer=session, query="otters", query_vector=vector, token_budget=500)
    assert "Otters swim in the brook." in body["context"]
    assert any(w.startswith("search_failed: the vector search failed") for w in body["warnings"]), body["warnings"]


@pytest.mark.django_db
def test_a_failing_summary_table_leaves_the_items(tenant: Tenant) -> None:
    session = _session_with_a_pinned_fact(tenant)
    with connection.cursor() as cur:
        cur.execute("ALTER TABLE summaries_summary RENAME TO summaries_summary_away")
    body = ask(tenant, layer=session, query="otters", token_budget=500)
    assert "Otters swim in the brook." in body["context"]
    assert "candidates_failed: layer summaries could not be read" in body["warnings"]


def _candidate(id: int, content: str) -> Candidate:
    return Candidate(
        id=id, kind="memory", type="fact", layer_id=1, layer_name="s", content=content, created_at=NOW, vector_rank=id
    )


def test_a_candidate_the_scorer_fails_on_is_left_out_and_named() -> None:
    def fussy(c: Candidate, ctx: RankContext) -> Scored:
        if c.id == 2:
            raise ValueError("cannot score this one")
        return weighted_score(c, ctx)

    failed: list[Candidate] = []
    ranked = rank(
        [_candidate(i, f"Fact {i}.") for i in (1, 2, 3)], context=RankContext(now=NOW), scorer=fussy, failed=failed
    )
    assert [s.candidate.id for s in ranked] == [1, 3] and [c.id for c in failed] == [2]
    with pytest.raises(ValueError):
        rank([_candidate(2, "x")], context=RankContext(now=NOW), scorer=fussy)


def test_a_candidate_that_cannot_be_counted_is_left_out_and_the_rest_packed() -> None:
    def count(text: str) -> int:
        if "poison" in text:
            raise RuntimeError("the tokenizer choked")
        return tokenizer.count_tokens(text, "cl100k_base")

    ranked = rank(
        [_candidate(1, "Fact one."), _candidate(2, "A poison pill."), _candidate(3, "Fact three.")],
        context=RankContext(now=NOW),
    )
    packed = assemble(ranked, budget=200, fmt="markdown", count=count)
    assert [c.id for c in packed.chunks] == [1, 3] and packed.failed == (("item", 2),)
    assert {e.id: e.reason for e in packed.trace}[2] == "failed"
    assert packed.total_tokens == count(packed.context) <= 200


@pytest.mark.django_db
def test_a_failing_ranking_function_skips_its_candidate_through_the_api(tenant: Tenant) -> None:
    session = _session_with_a_pinned_fact(tenant)
    before = skipped("candidate")
    functions = {
        "default": "apps.engine.rank.weighted_score",
        "fussy": "tests.assembly.test_failure_isolation.fussy_about_freezing",
    }
    with override_settings(RANKING_FUNCTIONS=functions):
        body = ask(tenant, layer=session, query="otters", token_budget=500, ranking="fussy")
    assert "Otters swim in the brook." in body["context"] and "freezes" not in body["context"]
    assert any(w.startswith("candidate_skipped: left out item ") for w in body["warnings"]), body["warnings"]
    assert skipped("candidate") == before + 1


def fussy_about_freezing(c: Candidate, ctx: RankContext) -> Scored:
    """A ranking function that fails on one candidate (the pinned fact)."""
    if "freezes" in c.content:
        raise ZeroDivisionError("a bug in a custom ranking function")
    return weighted_score(c, ctx)
