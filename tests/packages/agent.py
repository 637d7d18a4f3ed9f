"""An agent's side of the API, shared by the package and consumption tests."""

from __future__ import annotations

from typing import Any

from tests.conftest import Tenant


def layer(t: Tenant, kind: str, parent: int, **extra: object) -> int:
    body = {"kind": kind, "name": f"{kind} layer", "parent": parent, **extra}
    response = t.client.post("/api/v1/layers/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def bulk(t: Tenant, layer_id: int, items: list[dict[str, Any]]) -> list[int]:
    response = t.client.post("/api/v1/items/bulk/", {"layer": layer_id, "items": items}, format="json")
    assert response.status_code == 201, response.json()
    return [int(i) for i in response.json()["ids"]]


def ask(t: Tenant, **body: Any) -> dict[str, Any]:
    response = t.client.post("/api/v1/context/", body, format="json")
    assert response.status_code == 200, response.json()
    return dict(response.json())


def package_ids(body: dict[str, Any]) -> list[int]:
    """The package items of a context response, in context order."""
    return [c["id"] for c in body["chunks"] if c["kind"] == "package"]


def package(content: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "package", "type": "research", "content": content, **fields}
