"""A real daphne process serves the API over HTTP, against the test database."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from apps.core import tokenizer
from tests.support.daphne import http
from tests.support.tenants import Tenant

pytestmark = pytest.mark.server


def test_it_assembles_context_over_real_http_within_the_budget(daphne: str, loaded_tenant: Tenant) -> None:
    request = {"layer": loaded_tenant.root.pk, "query": "How long are database backups kept?", "token_budget": 40}
    status, body = http("POST", f"{daphne}/api/v1/context/", request, key=loaded_tenant.secret)

    assert status == 200, body
    result = json.loads(body)
    assert result["chunks"], result
    assert result["chunks"][0]["external_id"] == "backups"
    assert result["total_tokens"] <= result["token_budget"] == 40
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    assert tokenizer.count_tokens(result["context"], encoding) == result["total_tokens"]


def test_it_rejects_a_request_without_a_key_over_http(daphne: str, loaded_tenant: Tenant) -> None:
    status, body = http("POST", f"{daphne}/api/v1/context/", {"layer": loaded_tenant.root.pk, "query": "backups"})
    assert status == 401
    assert json.loads(body)["error"]["code"] == "not_authenticated"


def test_it_serves_metrics_that_count_the_served_requests(daphne: str, loaded_tenant: Tenant) -> None:
    http("GET", f"{daphne}/api/v1/status/", key=loaded_tenant.secret)
    status, body = http("GET", f"{daphne}/metrics")
    assert status == 200
    assert "# TYPE" in body
    assert 'route="api/v1/status/",status="200"' in body
