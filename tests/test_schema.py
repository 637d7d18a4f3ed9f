"""The OpenAPI schema describes the v1 API and its docs page renders, without network assets."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_schema_lists_every_v1_operation() -> None:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path, method in [
        ("/api/v1/layers/", "post"),
        ("/api/v1/layers/{layer_id}/", "patch"),
        ("/api/v1/items/", "get"),
        ("/api/v1/items/bulk/", "post"),
        ("/api/v1/items/{item_id}/", "delete"),
        ("/api/v1/context/", "post"),
        ("/api/v1/traces/{trace_id}/", "get"),
        ("/api/v1/status/", "get"),
        ("/api/v1/keys/", "post"),
        ("/api/v1/tokens/", "post"),
    ]:
        assert method in paths[path], (path, method)
    context_body = paths["/api/v1/context/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert context_body["$ref"].endswith("ContextRequest")


def test_the_docs_page_uses_bundled_assets() -> None:
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html and "cdn" not in html.lower()


def test_the_schema_generates_without_warnings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    assert "bearer" in (tmp_path / "schema.yml").read_text()
