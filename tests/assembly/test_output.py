"""The typed result and its wire shape: the fast JSON is exactly what the declared serializer fields give."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework import serializers

from apps.assembly.params import ContextParams
from apps.assembly.serializers import ContextOutput, PreviewOutput, TraceEntryOutput, WhatIfOutput
from apps.assembly.services import ContextResult, PreviewResult, context_assemble, context_preview
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def declared(serializer: serializers.Serializer, instance: object) -> dict[str, Any]:
    """DRF's own representation from the declared fields (what the OpenAPI schema describes)."""
    return dict(serializers.Serializer.to_representation(serializer, instance))


def load(tenant: Tenant) -> None:
    items_create(
        layer=tenant.root,
        items=[
            ItemInput(kind="memory", type="fact", content="Database backups are kept for 35 days.", external_id="b"),
            ItemInput(kind="spec", type="knowledge", content="Backups are restored with pg_restore in forty minutes."),
        ],
    )


def test_it_returns_a_frozen_result_whose_json_matches_the_declared_fields(tenant: Tenant) -> None:
    load(tenant)
    result = context_assemble(
        workspace=tenant.workspace, params=ContextParams(layer_id=tenant.root.pk, query="backups", token_budget=35)
    )
    assert isinstance(result, ContextResult) and result.chunks
    with pytest.raises(AttributeError):
        result.context = "changed"  # type: ignore[misc]
    assert ContextOutput(result).data == declared(ContextOutput(), result)
    assert result.overflow_count >= 1 and ContextOutput(result).data["overflow"]["message"].startswith("+")


def test_it_gives_the_preview_the_context_fields_plus_every_decision(tenant: Tenant) -> None:
    load(tenant)
    preview = context_preview(
        workspace=tenant.workspace, params=ContextParams(layer_id=tenant.root.pk, query="backups", token_budget=25)
    )
    assert isinstance(preview, PreviewResult) and preview.trace
    expected = {
        **declared(ContextOutput(), preview.result),
        "trace": [declared(TraceEntryOutput(), e) for e in preview.trace],
        "what_if": [declared(WhatIfOutput(), row) for row in preview.what_if],
    }
    assert PreviewOutput(preview).data == expected
    assert set(PreviewOutput().fields) == set(expected)


def test_it_describes_the_context_responses_in_the_schema(client: Any) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path, component in [("/api/v1/context/", "ContextOutput"), ("/api/v1/context/preview/", "PreviewOutput")]:
        response = schema["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert response["$ref"].endswith(component)
    context = schema["components"]["schemas"]["ContextOutput"]["properties"]
    assert context["chunks"]["items"]["$ref"].endswith("ChunkOutput") and "total_tokens" in context
    assert "trace" in schema["components"]["schemas"]["PreviewOutput"]["properties"]


def test_the_schemas_chunk_sources_are_the_engines(client: Any) -> None:
    """The schema's enum of `chunks[].source` is the engine's list (it lacked `community`, which the API returns)."""
    from apps.engine.types import Source

    schemas = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["components"]["schemas"]
    source = schemas["ChunkOutput"]["properties"]["source"]
    if "$ref" in source:
        source = schemas[source["$ref"].rsplit("/", 1)[-1]]
    elif "allOf" in source:
        source = schemas[source["allOf"][0]["$ref"].rsplit("/", 1)[-1]]
    assert source["enum"] == [str(s) for s in Source] and "community" in source["enum"]
