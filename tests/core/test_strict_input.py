"""Every input path refuses what cannot be stored or walked safely: NUL, lone surrogates, NaN and
Infinity, deep nesting, and fields the endpoint does not know, each as a 400 with a stable code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.core.strict_json import MAX_JSON_DEPTH
from apps.layers.models import Item, Layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def post_raw(client: APIClient, path: str, body: str, method: str = "POST") -> Any:
    return client.generic(method, path, data=body.encode("utf-8", "surrogatepass"), content_type="application/json")


def code_of(response: Any) -> str:
    return response.json()["error"]["code"]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ('{"layer": 1, "content": "x", "helpfulness": NaN}', "invalid_helpfulness"),
        ('{"layer": 1, "content": "x", "helpfulness": Infinity}', "invalid_helpfulness"),
        ('{"layer": 1, "content": "x", "helpfulness": -Infinity}', "invalid_helpfulness"),
        ('{"layer": 1, "content": "x", "helpfulness": 1e999}', "invalid_helpfulness"),
        ('{"layer": 1, "content": "x", "source_refs": [[{"a": NaN}]]}', "invalid_source_refs"),
        ("[1, 2, NaN]", "invalid_number"),
        ('{"layer": 1, "content": "x", "helpfulness": 0.5, "n": ' + "9" * 5000 + "}", "invalid_number"),
        ('{"layer": 1, "content": "a\\u0000b"}', "invalid_content"),
        ('{"layer": 1, "content": "\\ud800"}', "invalid_content"),
        ('{"layer": 1, "content": "x", "metadata": {"\\udfff": 1}}', "invalid_metadata"),
        ('{"layer": 1, "content": "x", "metadata": {"k": {"a\\u0000": 1}}}', "invalid_metadata"),
        ('{"layer": 1, "content": "x", "a\\u0000b": 1}', "invalid_characters"),
        ('{"layer": 1, "content": {"a": 1', "malformed_json"),
    ],
)
def test_it_refuses_unstorable_json_before_any_view_runs(tenant: Tenant, body: str, code: str) -> None:
    response = post_raw(tenant.client, "/api/v1/strategies/", body)
    assert response.status_code == 400 and code_of(response) == code
    assert not Item.objects.filter(layer__workspace=tenant.workspace).exists()


def test_it_refuses_bytes_that_are_not_utf8(tenant: Tenant) -> None:
    response = tenant.client.generic(
        "POST", "/api/v1/layers/", data=b'{"name": "\xff"}', content_type="application/json"
    )
    assert response.status_code == 400 and code_of(response) == "malformed_json"


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
@pytest.mark.parametrize("path", ["/api/v1/context/", "/api/v1/items/", "/api/v1/profiles/", "/api/v1/layers/import/"])
def test_it_refuses_json_nested_deeper_than_the_limit_on_any_endpoint(tenant: Tenant, path: str, depth: int) -> None:
    response = post_raw(tenant.client, path, '{"metadata": ' + nested(depth - 1) + "}")
    assert response.status_code == 400 and code_of(response) == "json_too_deep"
    assert response.json()["error"]["details"]["max_depth"] == MAX_JSON_DEPTH


def test_it_keeps_metadata_nested_up_to_the_limit(tenant: Tenant) -> None:
    metadata = json.loads('{"a": ' + nested(MAX_JSON_DEPTH - 2) + "}")  # body 1, metadata 2, arrays 3..MAX
    response = tenant.client.post(
        "/api/v1/items/",
        {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "deep", "metadata": metadata},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["metadata"] == metadata


def test_a_nan_helpfulness_sent_as_a_string_is_refused_and_commits_nothing(tenant: Tenant) -> None:
    for value in ("NaN", "nan", "Infinity", "-inf", "1e999"):
        response = tenant.client.post(
            "/api/v1/strategies/", {"layer": tenant.root.pk, "content": "x", "helpfulness": value}, format="json"
        )
        assert response.status_code == 400 and code_of(response) == "invalid_helpfulness", value
    assert not Item.objects.filter(layer__workspace=tenant.workspace).exists()
    assert tenant.client.get("/api/v1/strategies/").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/attempts/?group_id=a%00b",
        "/api/v1/attempts/?agent_type=a%00b",
        "/api/v1/attempts/?layer=1%00",
        "/api/v1/strategies/?group_id=a%00b",
        "/api/v1/strategies/?agent_type=a%00b",
        "/api/v1/layers/?kind=a%00b",
        "/api/v1/layers/?external_id=a%00b",
        "/api/v1/items/?type=a%00b",
        "/api/v1/items/?kind=a%00b",
        "/api/v1/error-patterns/?signature=a%00b",
        "/api/v1/history/?query=a%00b",
        "/api/v1/stats/?agent_type=a%00b",
        "/api/v1/status/?a%00b=1",
        "/api/v1/profiles/a%00b/",
        "/api/v1/templates/a%00b/",
        "/api/v1/context/stream?query=a%00b",
    ],
)
def test_it_refuses_nul_in_query_parameters_and_paths(tenant: Tenant, path: str) -> None:
    response = tenant.client.get(path)
    assert response.status_code == 400 and code_of(response) == "invalid_characters"


def test_a_page_with_nul_in_its_path_is_a_plain_400(tenant: Tenant) -> None:
    assert APIClient().get("/login/?next=%00").status_code == 400


def test_it_refuses_nul_in_summaries_user_filter(tenant: Tenant) -> None:
    response = tenant.client.get(f"/api/v1/layers/{tenant.root.pk}/summaries/?user=a%00b")
    assert response.status_code == 400 and code_of(response) == "invalid_characters"


ROOT = -1  # stands for the tenant's company layer in the bodies below


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/v1/context/", {"layer": ROOT, "query": "backups", "tokn_budget": 100}),
        ("POST", "/api/v1/items/", {"layer": ROOT, "kind": "memory", "type": "fact", "content": "x", "colour": "red"}),
        ("POST", "/api/v1/items/bulk/", {"layer": ROOT, "items": [{"kind": "memory", "content": "x", "colour": 1}]}),
        ("PATCH", "/api/v1/layers/{root}/", {"nmae": "typo"}),
        ("POST", "/api/v1/profiles/", {"name": "p", "tokn_budget": 100}),
        ("POST", "/api/v1/strategies/", {"layer": ROOT, "content": "x", "helpfullness": 0.9}),
        ("POST", "/api/v1/redaction/allowlist/", {"kind": "exact", "value": "v", "colour": "red"}),
        ("GET", "/api/v1/context/stream", {"layer": ROOT, "query": "backups", "tokn_budget": 100}),
    ],
)
def test_it_refuses_unknown_fields_everywhere(tenant: Tenant, method: str, path: str, body: dict[str, Any]) -> None:
    body = {key: tenant.root.pk if value == ROOT else value for key, value in body.items()}
    name_before = Layer.objects.get(pk=tenant.root.pk).name
    if method == "GET":  # the SSE endpoint takes the body's fields as its query string
        response = tenant.client.get(path, body)
    else:
        response = tenant.client.generic(
            method, path.format(root=tenant.root.pk), data=json.dumps(body), content_type="application/json"
        )
    assert response.status_code == 400 and code_of(response) == "unknown_fields", response.json()
    assert response.json()["error"]["details"]["fields"] in (["tokn_budget"], ["colour"], ["nmae"], ["helpfullness"])
    assert Layer.objects.get(pk=tenant.root.pk).name == name_before
    assert not Item.objects.filter(layer__workspace=tenant.workspace).exists()


def test_the_layer_config_endpoint_keeps_its_older_code_for_unknown_fields(tenant: Tenant) -> None:
    response = tenant.client.put(
        f"/api/v1/layers/{tenant.root.pk}/config/", {"update_intervall_seconds": 600}, format="json"
    )
    assert response.status_code == 400 and code_of(response) == "invalid_fields"


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"query_vector": [0.0] * 384}, "invalid_query_vector"),
        ({"query_vector": [1e-30] * 384}, "invalid_query_vector"),  # the squares underflow to zero
        ({"query_vector": [1e30] * 384}, "invalid_query_vector"),  # the squares overflow
        ({"query_vector": ["NaN"] * 384}, "invalid_query_vector"),
        ({"query": "x", "min_confidence": "NaN"}, "invalid_min_confidence"),
        ({"query": "x", "min_confidence": "Infinity"}, "invalid_min_confidence"),
        ({"query": "x", "since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "invalid_since"),
    ],
)
def test_it_refuses_context_requests_that_cannot_rank(tenant: Tenant, extra: dict[str, Any], code: str) -> None:
    response = tenant.client.post("/api/v1/context/", {"layer": tenant.root.pk, **extra}, format="json")
    assert response.status_code == 400 and code_of(response) == code, response.json()


def test_it_accepts_since_equal_to_until_and_a_real_vector(tenant: Tenant) -> None:
    moment = "2026-01-01T00:00:00Z"
    response = tenant.client.post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query_vector": [0.0] * 383 + [1.0], "since": moment, "until": moment},
        format="json",
    )
    assert response.status_code == 200, response.json()
