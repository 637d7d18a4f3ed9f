"""An `Idempotency-Key` is held exactly as long as its first request runs: a slow request keeps it
however long it takes, and a crashed one frees it at once."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from apps.layers.models import Item
from apps.workspaces.models import IdempotencyKey
from tests.support.processes import crash, database_url, free_port, http_json, server_process
from tests.support.tenants import Tenant, make_tenant
from tests.support.waiting import wait_until

KEY = "bulk-7f3a"


def _bulk(tenant: Tenant) -> dict[str, Any]:
    contents = ["Backups are kept for 35 days.", "Restores are tested monthly."]
    return {"layer": tenant.root.pk, "items": [{"kind": "memory", "type": "fact", "content": c} for c in contents]}


@contextmanager
def _items_locked() -> Iterator[None]:
    """Item inserts wait while this is open: another connection holds a SHARE lock on the table."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("LOCK TABLE layers_item IN SHARE MODE")
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(10)
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def _in_flight() -> bool:
    return IdempotencyKey.objects.filter(key=KEY, status_code__isnull=True).exists()


def _post_in_thread(tenant: Tenant, answers: list[int]) -> threading.Thread:
    def send() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tenant.secret}")
        try:
            answers.append(
                client.post("/api/v1/items/bulk/", _bulk(tenant), format="json", HTTP_IDEMPOTENCY_KEY=KEY).status_code
            )
        finally:
            connections.close_all()

    thread = threading.Thread(target=send)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_retry_of_a_request_still_running_after_a_minute_is_refused_not_written_again() -> None:
    tenant = make_tenant("slow")
    first: list[int] = []
    retry: list[int] = []
    with _items_locked():
        running = _post_in_thread(tenant, first)
        wait_until(_in_flight, timeout=10, what="the first request's claim")
        # The first request has been running for a minute (the Python client's default timeout).
        IdempotencyKey.objects.filter(key=KEY).update(created_at=timezone.now() - timedelta(seconds=61))
        retried = _post_in_thread(tenant, retry)
        retried.join(0.5)  # refused at once, or (the bug) waiting on the same lock to write again
    running.join(30)
    retried.join(30)
    assert first == [201] and retry == [409]
    assert Item.objects.filter(workspace=tenant.workspace).count() == 2


def _sent_until_crash(url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
    with contextlib.suppress(OSError, http.client.HTTPException):  # the server dies before it answers
        http_json("POST", url, body, headers, timeout=30)


@pytest.mark.server
@pytest.mark.django_db(transaction=True)
def test_a_crashed_servers_key_is_free_for_the_retry_at_once(tmp_path: Path) -> None:
    tenant = make_tenant("crash")
    headers = {"Authorization": f"Bearer {tenant.secret}", "Idempotency-Key": KEY}
    # The server's inserts wait on the test's lock as long as it is held.
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "DB_LOCK_TIMEOUT_MS": "0"}
    with _items_locked():
        with server_process(env, free_port(), tmp_path / "serve.log") as (base, server):
            sent = threading.Thread(
                target=_sent_until_crash, args=(f"{base}/api/v1/items/bulk/", _bulk(tenant), headers)
            )
            sent.start()
            wait_until(_in_flight, timeout=30, what="the first request's claim")
            crash(server)
            sent.join(30)

    def retried() -> bool:  # the Python client gives up after ~3 s of 409 in_progress
        body = json.dumps(_bulk(tenant))  # the same bytes as the crashed request's
        answer = tenant.client.post(
            "/api/v1/items/bulk/", body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=KEY
        )
        assert answer.status_code in (201, 409), answer.content
        return answer.status_code == 201

    wait_until(retried, timeout=3, interval=0.5, what="the retry to be answered")
    assert Item.objects.filter(workspace=tenant.workspace).count() == 2
