"""Redis (cache and Celery broker) stopped under a running server: writes and context requests
still answer, committed writes answer success with a warning, the work runs in the server, and an
`Idempotency-Key` retry returns the first answer."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from django.db import connection

from apps.layers.models import Item
from tests.support.processes import database_url, free_port, http_json, private_redis, served
from tests.support.tenants import make_tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server

REDIS_PORT = 6391


def _items(root: int, *contents: str) -> dict[str, object]:
    return {"layer": root, "items": [{"kind": "memory", "type": "fact", "content": c} for c in contents]}


@pytest.mark.django_db(transaction=True)
def test_a_stopped_redis_never_fails_a_request_and_a_retry_is_answered_once(tmp_path: Path) -> None:
    tenant = make_tenant("outage")
    auth = {"Authorization": f"Bearer {tenant.secret}"}
    with private_redis(REDIS_PORT, tmp_path) as redis_server:
        env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "REDIS_URL": redis_server.url}
        with served(env, free_port(), tmp_path / "serve.log") as base:
            status, headers, body = http_json(
                "POST", f"{base}/api/v1/items/bulk/", _items(tenant.root.pk, "Backups run at 02:00 UTC."), auth
            )
            assert status == 201 and "warning" not in headers, body  # queued in the broker (no worker runs)

            redis_server.stop()
            retry = {**auth, "Idempotency-Key": "bulk-0042"}
            payload = _items(tenant.root.pk, "Backups are kept for 35 days.", "Restores are tested monthly.")
            started = time.monotonic()
            status, headers, body = http_json("POST", f"{base}/api/v1/items/bulk/", payload, retry)
            took = time.monotonic() - started
            assert status == 201, body
            assert took < 2.0, took
            assert "broker is unavailable" in headers.get("warning", ""), (headers, body)
            assert any("broker is unavailable" in w for w in body["warnings"])

            again_status, again_headers, again = http_json("POST", f"{base}/api/v1/items/bulk/", payload, retry)
            assert again_status == 201 and again["ids"] == body["ids"] and again_headers["idempotent-replayed"]
            assert Item.objects.filter(workspace=tenant.workspace).count() == 3

            # The work ran in the server process: every item (the one queued before the outage
            # too, through the all-workspace sweep) gets its embedding without broker or worker.
            wait_until(lambda: not Item.objects.filter(embedding__isnull=True).exists(), timeout=90, what="embeddings")
            query = {"layer": tenant.root.pk, "query": "How long are backups kept?", "token_budget": 200}
            status, _, context = http_json("POST", f"{base}/api/v1/context/", query, auth)
            assert status == 200 and "35 days" in context["context"], context
