"""/metrics speaks the Prometheus text format without a key and counts the requests it saw."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_it_serves_prometheus_text_without_authentication(client: Client) -> None:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert "# TYPE context_architect_http_requests_total counter" in body
    assert "# TYPE context_architect_assembly_latency_ms histogram" in body


def test_it_counts_requests_by_route_and_status(client: Client, tenant: Tenant) -> None:
    def served_ok() -> float:  # the process's count so far: earlier tests of this process may have added to it
        series = 'context_architect_http_requests_total{method="GET",route="api/v1/status/",status="200"} '
        body = client.get("/metrics").content.decode()
        return next((float(line.split()[-1]) for line in body.splitlines() if line.startswith(series)), 0.0)

    before = served_ok()
    assert tenant.client.get("/api/v1/status/").status_code == 200
    assert served_ok() == before + 1


def test_it_observes_the_latency_of_each_assembly(client: Client, tenant: Tenant) -> None:
    def count() -> float:
        body = client.get("/metrics").content.decode()
        line = next(x for x in body.splitlines() if x.startswith("context_architect_assembly_latency_ms_count"))
        return float(line.split()[-1])

    before = count()
    response = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "anything", "token_budget": 100}, format="json"
    )
    assert response.status_code == 200
    assert count() == before + 1
