"""Fixes from review: min_confidence=0 is a value, the hint source loads only the winners' full rows,
and the injected-hints counter counts the injections recorded."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.error_patterns.models import HintInjection
from apps.error_patterns.selectors import patterns_match
from apps.error_patterns.services import hints_injected
from apps.layers.models import Layer
from apps.metrics.registry import REGISTRY
from tests.conftest import Tenant
from tests.error_patterns.test_hints import SIGNATURE, pattern
from tests.error_patterns.test_patterns_api import make


def injected() -> float:
    return REGISTRY.get_sample_value("context_architect_error_hints_injected_total") or 0.0


def test_min_confidence_zero_is_not_ignored(tenant: Tenant) -> None:
    low = make(tenant.workspace, "timeouterror: read timed out after <n>s", 0.0)
    high = make(tenant.workspace, "modulenotfounderror: no module named <str>", 0.9)
    # min_confidence=0 wins over the `confidence` alias; `0 or alias` used to pick the alias.
    both = tenant.client.get("/api/v1/error-patterns/?min_confidence=0&confidence=0.5")
    assert both.status_code == 200
    assert [p["id"] for p in both.json()["results"]] == [high.pk, low.pk]
    alias = tenant.client.get("/api/v1/error-patterns/?confidence=0.5").json()
    assert [p["id"] for p in alias["results"]] == [high.pk]


def test_matching_loads_full_rows_of_the_winners_only(tenant: Tenant) -> None:
    exact = pattern(tenant, confidence=0.9, solution="the exact fix")
    for n in range(30):
        pattern(tenant, confidence=0.9, solution=f"fix {n} " + "x" * 2000, signature=f"{SIGNATURE} variant {n}")
    with CaptureQueriesContext(connection) as captured:
        matches = patterns_match(
            workspace_id=tenant.workspace.pk, signature=SIGNATURE, min_confidence=0.5, threshold=0.5, limit=3
        )
    assert len(matches) == 3 and matches[0] == (1.0, exact)
    assert all(p.solution for _, p in matches)  # full rows
    assert len(captured.captured_queries) == 2
    with_solution = [q["sql"] for q in captured.captured_queries if '"solution"' in q["sql"].split(" FROM ")[0]]
    assert len(with_solution) == 1 and " IN (" in with_solution[0]  # by primary key, the 3 winners


def test_the_counter_counts_injections_recorded_not_hints_already_open(tenant: Tenant, session: Layer) -> None:
    first = pattern(tenant, confidence=0.9, solution="fix a")
    second = pattern(tenant, confidence=0.9, solution="fix b", signature=f"{SIGNATURE} b")
    scope = {"workspace_id": tenant.workspace.pk, "layer_id": session.pk, "agent_type": "dev", "group_id": "g"}
    assert hints_injected(**scope, pattern_ids=[first.pk]) == 1
    before = injected()
    assert hints_injected(**scope, pattern_ids=[first.pk, second.pk, second.pk]) == 1  # first is open already
    assert injected() - before == 1
    assert HintInjection.objects.filter(workspace_id=tenant.workspace.pk).count() == 2
