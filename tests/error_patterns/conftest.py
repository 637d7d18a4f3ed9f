"""Fixtures for attempts and error patterns: a session layer and a fact in it (helpers: attempts.py)."""

from __future__ import annotations

import pytest

from apps.layers.models import Layer
from tests.error_patterns.attempts import make_session
from tests.support.tenants import Tenant


@pytest.fixture
def session(tenant: Tenant) -> Layer:
    return make_session(tenant)


@pytest.fixture
def fact(tenant: Tenant, session: Layer) -> None:
    items = [{"kind": "memory", "type": "fact", "content": "Deploys run the migrations first."}]
    assert (
        tenant.client.post("/api/v1/items/bulk/", {"layer": session.pk, "items": items}, format="json").status_code
        == 201
    )
