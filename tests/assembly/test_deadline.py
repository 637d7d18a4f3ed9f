"""Latency control: past its deadline assembly returns the partial context ready so far, with a
warning, and finishes in the background so the next identical request gets the whole context."""

from __future__ import annotations

import pytest
from django.test import override_settings

from apps.core import background
from tests.support.api import embedded_facts
from tests.support.tenants import Tenant, make_tenant
from tests.support.waiting import wait_until

FACTS = [f"Deploy note {i}: the billing service deploys on Tuesdays after review." for i in range(30)]


def load(t: Tenant) -> int:
    return embedded_facts(t, FACTS)


@pytest.mark.django_db
def test_a_request_past_its_deadline_returns_keyword_results_with_a_warning(tenant: Tenant) -> None:
    session = load(tenant)
    body = tenant.client.post(
        "/api/v1/context/", {"layer": session, "query": "billing deploys", "timeout_ms": 1}, format="json"
    ).json()
    assert body["partial"] is True and body["cached"] is False
    assert body["chunks"], "keyword search always gets its floor, so something is ready"
    assert any(("deadline" in w and "vector search" in w) or "query embedding" in w for w in body["warnings"])
    assert body["total_tokens"] <= body["token_budget"]
    whole = tenant.client.post(
        "/api/v1/context/", {"layer": session, "query": "billing deploys", "timeout_ms": 0}, format="json"
    ).json()
    assert whole["partial"] is False and not any("deadline" in w for w in whole["warnings"])


@pytest.mark.django_db
def test_the_default_deadline_comes_from_settings(tenant: Tenant) -> None:
    session = load(tenant)
    with override_settings(ASSEMBLY_TIMEOUT_MS=1):
        body = tenant.client.post("/api/v1/context/", {"layer": session, "query": "billing"}, format="json").json()
    assert body["partial"] is True


@pytest.mark.django_db(transaction=True)
def test_the_background_finishes_a_partial_context_into_the_cache() -> None:
    t = make_tenant("deadline")
    session = load(t)
    request = {"layer": session, "query": "when does billing deploy", "timeout_ms": 1}
    partial = t.client.post("/api/v1/context/", request, format="json").json()
    assert partial["partial"] is True
    assert background.wait_idle(60)
    warmed = wait_until(
        lambda: (answer := t.client.post("/api/v1/context/", request, format="json").json())["cached"] and answer,
        interval=0.2,
        what="the answer cached",
    )
    assert warmed["cached"] is True and warmed["partial"] is False
    assert not any("deadline" in w for w in warmed["warnings"])
