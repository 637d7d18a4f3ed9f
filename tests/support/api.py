"""An agent's side of the API: create a layer, write items in bulk, ask for context (each asserts success)."""

from __future__ import annotations

from typing import Any

from tests.support.tenants import Tenant


def layer(t: Tenant, kind: str, parent: int, **extra: object) -> int:
    """A new layer of `kind` under `parent` (named "<kind> layer" unless `extra` names it); its id."""
    body = {"kind": kind, "name": f"{kind} layer", "parent": parent, **extra}
    response = t.client.post("/api/v1/layers/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def bulk(t: Tenant, layer_id: int, items: list[dict[str, Any]]) -> list[int]:
    """The ids of `items` written to the layer by POST /items/bulk/."""
    response = t.client.post("/api/v1/items/bulk/", {"layer": layer_id, "items": items}, format="json")
    assert response.status_code == 201, response.json()
    return [int(i) for i in response.json()["ids"]]


def ask(t: Tenant, **body: Any) -> dict[str, Any]:
    """The answer of POST /context/ with `body`."""
    response = t.client.post("/api/v1/context/", body, format="json")
    assert response.status_code == 200, response.json()
    return dict(response.json())


def embedded_facts(t: Tenant, facts: list[str]) -> int:
    """A new session under the tenant's root holding `facts` as memories, embedded; its id."""
    from apps.layers.embedder import items_embed_pending

    session = layer(t, "session", t.root.pk, name="s")
    bulk(t, session, [{"kind": "memory", "type": "fact", "content": text} for text in facts])
    items_embed_pending(workspace_id=t.workspace.pk)
    return session
