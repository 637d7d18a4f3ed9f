"""GET /api/v1/status/ is composed through `workspaces.signals.status_read`: workspaces answers with its
slug, layers (which it does not import) with the rest; the answer keeps its fields and their order."""

from __future__ import annotations

import pytest
from django.conf import settings

from apps.layers.services import ItemInput, items_create
from apps.workspaces.selectors import workspace_status
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_the_status_has_every_field_in_order(tenant: Tenant) -> None:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups run nightly.")])
    response = tenant.client.get("/api/v1/status/")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == [
        "workspace",
        "layers",
        "items",
        "items_pending_embedding",
        "embedding_items_per_s",
        "embedding_eta_seconds",
        "embedding_model_change",
        "background",
        "providers",
    ]
    assert body["workspace"] == tenant.workspace.slug
    assert (body["layers"], body["items"]) == (1, 1)
    assert list(body["providers"]) == [
        "embedding",
        "vector_search",
        "keyword_search",
        "cache",
        "tokenizer",
        "default_model",
    ]
    assert body["background"]["mode"] == settings.BACKGROUND_MODE
    assert list(workspace_status(workspace=tenant.workspace)) == list(body)  # the WebSocket and console read it
