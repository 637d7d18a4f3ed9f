"""The error-pattern tests' shared parts: a session, an attempt reported, a pattern stored, a context
asked for with an agent's error and the hints it carries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from apps.error_patterns.models import ErrorPattern
from apps.layers.models import Layer
from apps.layers.services import layer_create
from apps.workspaces.models import Workspace
from tests.support.tenants import Tenant

ERROR = 'psycopg.errors.UndefinedTable: relation "orders" does not exist'
SIGNATURE = "psycopg.errors.undefinedtable: relation <str> does not exist"


def pattern(tenant: Tenant, *, confidence: float, solution: str, signature: str = SIGNATURE) -> ErrorPattern:
    now = timezone.now()
    return ErrorPattern.objects.create(
        workspace=tenant.workspace,
        signature=signature,
        error_excerpt=ERROR,
        solution=solution,
        confidence=confidence,
        first_seen=now,
        last_seen=now,
    )


def context(tenant: Tenant, layer: Layer, **body: Any) -> dict[str, Any]:
    # timeout_ms=0: wait for the whole context, so a loaded test machine cannot skip the hints at the deadline.
    payload = {
        "layer": layer.pk,
        "query": "deploy",
        "agent_type": "developer",
        "group_id": "g1",
        "timeout_ms": 0,
        **body,
    }
    response = tenant.client.post("/api/v1/context/", payload, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def hints(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["chunks"] if c["source"] == "error_hint"]


def make_session(tenant: Tenant, external_id: str = "sess-1") -> Layer:
    return layer_create(
        workspace=tenant.workspace, kind="session", name=external_id, parent=tenant.root, external_id=external_id
    )


def report(tenant: Tenant, layer: Layer, outcome: str, **fields: Any) -> dict[str, Any]:
    body = {"layer": layer.pk, "outcome": outcome, "group_id": "g1", "agent_type": "developer", **fields}
    response = tenant.client.post("/api/v1/attempts/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def make(workspace: Workspace, signature: str, confidence: float, solution: str = "fix") -> ErrorPattern:
    now = timezone.now()
    return ErrorPattern.objects.create(
        workspace=workspace,
        signature=signature,
        error_excerpt=signature,
        solution=solution,
        confidence=confidence,
        first_seen=now - timedelta(days=1),
        last_seen=now,
    )
