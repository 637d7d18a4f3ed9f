"""GET /api/v1/context/stream: the non-streaming call's chunks as Server-Sent Events, then the totals."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from apps.assembly.streaming import context_params, request_from_query_string
from apps.core.serializers import UnknownFields
from tests.assembly.streams import QUESTION, assert_same_chunks, load, sse_events
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_it_streams_the_chunks_of_the_non_streaming_call_then_the_totals(tenant: Tenant) -> None:
    load(tenant)
    # No deadline (timeout_ms 0): under machine load the 500 ms default can cut one of the two answers short.
    body = {"layer": tenant.root.pk, "query": QUESTION, "token_budget": 60, "format": "text", "timeout_ms": 0}
    expected = tenant.client.post("/api/v1/context/", body, format="json").json()
    assert len(expected["chunks"]) >= 2, expected  # one of them cut to fit, with the engine of today

    response = tenant.client.get("/api/v1/context/stream", body, HTTP_ACCEPT="text/event-stream")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream" and response["Cache-Control"] == "no-cache"
    events = sse_events(response)
    assert [name for name, _ in events] == ["chunk"] * len(expected["chunks"]) + ["complete"]
    assert_same_chunks([data for _, data in events[:-1]], expected["chunks"])
    complete = events[-1][1]
    assert complete["total_chunks"] == len(expected["chunks"])
    for key in ("total_tokens", "token_budget", "truncated_count", "context", "overflow", "warnings"):
        assert complete[key] == expected[key], key
    assert complete["token_budget"] == 60 and complete["elapsed_ms"] >= 0 and complete["trace_id"]


def test_it_takes_lists_comma_separated_or_repeated_with_or_without_the_trailing_slash(tenant: Tenant) -> None:
    load(tenant)
    question = {"layer": tenant.root.pk, "query": "database backups restore", "token_budget": 400}
    only_specs = tenant.client.post("/api/v1/context/", {**question, "kinds": ["spec"]}, format="json").json()
    both = tenant.client.post("/api/v1/context/", {**question, "kinds": ["spec", "memory"]}, format="json").json()
    assert {c["kind"] for c in only_specs["chunks"]} == {"spec"} and {c["kind"] for c in both["chunks"]} == {
        "spec",
        "memory",
    }

    for url, kinds, expected in [
        ("/api/v1/context/stream", "spec", only_specs),
        ("/api/v1/context/stream/", "spec,memory", both),
        ("/api/v1/context/stream/", ["spec", "memory"], both),
    ]:
        events = sse_events(tenant.client.get(url, {**question, "kinds": kinds}))
        assert_same_chunks([data for name, data in events if name == "chunk"], expected["chunks"])


def test_it_refuses_a_stream_without_a_valid_key(tenant: Tenant, anon: Any) -> None:
    response = anon.get("/api/v1/context/stream", {"layer": tenant.root.pk, "query": "backups"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    anon.credentials(HTTP_AUTHORIZATION="Bearer ca_wrong")
    assert anon.get("/api/v1/context/stream", {"layer": tenant.root.pk, "query": "x"}).status_code == 401


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"query": "backups", "token_budget": "0"}, "invalid_token_budget"),
        ({"query": "backups", "token_budget": "lots"}, "invalid_token_budget"),
        ({"query": "backups", "kinds": "memory,bogus"}, "invalid_kinds"),
        ({"query": "backups", "format": "yaml"}, "invalid_format"),
        ({"query": "backups", "since": "yesterday"}, "invalid_since"),
        ({"query": " "}, "missing_query"),
    ],
)
def test_it_answers_bad_input_with_json_and_a_code_before_any_event(
    tenant: Tenant, query: dict[str, str], code: str
) -> None:
    response = tenant.client.get(
        "/api/v1/context/stream", {"layer": tenant.root.pk, **query}, HTTP_ACCEPT="text/event-stream"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == code


def test_it_answers_404_for_a_layer_of_another_workspace(tenant: Tenant, other_tenant: Tenant) -> None:
    theirs = load(other_tenant)
    for query in ({"layer": theirs.pk}, {"layer_external_id": "nope"}):
        response = tenant.client.get("/api/v1/context/stream", {**query, "query": "backups"})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "layer_not_found"


def test_it_reads_a_query_string_into_the_fields_of_the_json_body() -> None:
    query = QueryDict("layer=7&query=a+b&kinds=spec,memory&kinds=document&types=&model=&token_budget=50")
    assert request_from_query_string(query) == {
        "layer": "7",
        "query": "a b",
        "kinds": ["spec", "memory", "document"],
        "token_budget": "50",
    }
    params = context_params(request=request_from_query_string(query))
    assert (params.layer_id, params.kinds, params.token_budget) == (7, ("spec", "memory", "document"), 50)
    unknown = request_from_query_string(QueryDict("layer=7&query=x&tokn_budget=50"))
    assert unknown["tokn_budget"] == "50"  # kept, so that the serializer refuses it like an unknown body key
    with pytest.raises(UnknownFields):
        context_params(request=unknown)
