"""A bigger context searches deeper (apps/assembly/sources/hits.py candidate_limit): each search fetches
RETRIEVAL_CANDIDATES per 1,000 tokens of the budget, within [RETRIEVAL_CANDIDATES, RETRIEVAL_CANDIDATES_MAX]."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import SettingsWrapper

from apps.assembly.sources.hits import candidate_limit
from tests.support.api import bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

COLOURS = ["red", "blue", "green", "amber", "violet", "grey", "teal", "ochre", "plum", "sand"]


def test_the_limit_grows_with_the_budget_between_the_two_settings(settings: SettingsWrapper) -> None:
    settings.RETRIEVAL_CANDIDATES, settings.RETRIEVAL_CANDIDATES_MAX = 50, 100
    assert [candidate_limit(b) for b in (1, 500, 1000, 1500, 2000, 4000, 8000)] == [50, 50, 50, 75, 100, 100, 100]
    settings.RETRIEVAL_CANDIDATES_MAX = 50  # the depth of before: one fixed limit
    assert candidate_limit(8000) == 50


def _keyword_hits(t: Tenant, scope: int, budget: int) -> int:
    response = t.client.post(
        "/api/v1/context/preview/", {"layer": scope, "query": "otter sightings", "token_budget": budget}, format="json"
    )
    assert response.status_code == 200, response.json()
    return sum(1 for e in response.json()["trace"] if e["source"] == "item" and e["origin"] == "keyword")


def test_a_bigger_budget_brings_more_search_hits_into_the_ranking(tenant: Tenant, settings: SettingsWrapper) -> None:
    settings.RETRIEVAL_CANDIDATES, settings.RETRIEVAL_CANDIDATES_MAX = 20, 60
    project = layer(tenant, "project", tenant.root.pk)
    notes = [
        {
            "kind": "memory",
            "type": "fact",
            "content": f"Otter sightings log {n}: a {COLOURS[n % 10]} kayak saw {n % 7 + 1} otters.",
        }
        for n in range(90)
    ]
    bulk(tenant, project, notes)  # not embedded: the keyword search alone finds them
    assert _keyword_hits(tenant, project, 500) == 20
    assert _keyword_hits(tenant, project, 2000) == 40
    assert _keyword_hits(tenant, project, 8000) == 60
