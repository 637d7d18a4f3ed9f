"""Fixtures for attempts and error patterns: a session layer and a helper to report attempts."""

from __future__ import annotations

from typing import Any

import pytest

from apps.layers.models import Layer
from apps.layers.services import layer_create
from tests.conftest import Tenant


def make_session(tenant: Tenant, external_id: str = "sess-1") -> Layer:
    return layer_create(
        workspace=tenant.workspace, kind="session", name=external_id, parent=tenant.root, external_id=external_id
    )


@pytest.fixture
def session(tenant: Tenant) -> Layer:
    return make_session(tenant)


def report(tenant: Tenant, layer: Layer, outcome: str, **fields: Any) -> dict[str, Any]:
    body = {"layer": layer.pk, "outcome": outcome, "group_id": "g1", "agent_type": "developer", **fields}
    response = tenant.client.post("/api/v1/attempts/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()
