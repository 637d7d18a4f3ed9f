"""A workspace's content version lives in PostgreSQL: every process of every instance sees a write at
once, with or without Redis, and a Redis that was away while content changed serves nothing cached
before it."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from apps.core import background, cache, versions
from apps.layers.models import Item
from tests.support.processes import database_url, free_port, http_json, served, wait_for_port
from tests.support.tenants import make_tenant

SECRET = "The vault passphrase is tangerine-42."


def _context(base: str, root: int, auth: dict[str, str]) -> dict[str, Any]:
    body = {"layer": root, "query": "What is the vault passphrase?", "token_budget": 300, "timeout_ms": 20000}
    status, _, answer = http_json("POST", f"{base}/api/v1/context/", body, auth)
    assert status == 200, answer
    return dict(answer)


@pytest.mark.server
@pytest.mark.django_db(transaction=True)
def test_a_deleted_item_is_served_by_no_worker_without_redis(tmp_path: Path) -> None:
    tenant = make_tenant("workers")
    auth = {"Authorization": f"Bearer {tenant.secret}"}
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env |= {"DATABASE_URL": database_url(connection.settings_dict), "OMP_NUM_THREADS": "1"}
    with served(env, free_port(), tmp_path / "serve.log", workers=2) as base:
        item = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": SECRET, "pinned": True}
        status, _, written = http_json("POST", f"{base}/api/v1/items/", item, auth)
        assert status == 201, written
        # A new connection each: the kernel spreads them over both workers, and each caches the answer.
        answers = [_context(base, tenant.root.pk, auth) for _ in range(16)]
        assert all("tangerine-42" in a["context"] for a in answers)
        assert any(a["cached"] for a in answers)
        status, _, _ = http_json("DELETE", f"{base}/api/v1/items/{written['id']}/", headers=auth)
        assert status == 204
        after = [_context(base, tenant.root.pk, auth) for _ in range(16)]
    assert not [a for a in after if "tangerine-42" in a["context"]], "a worker served the deleted item"


class PersistentRedis:
    """A redis-server of the test's own that keeps its data across a restart (its dump file)."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port, self.workdir = port, workdir
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.workdir)),
                *("--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, timeout=10)

    def stop(self) -> None:
        """Shut down after writing the dump the next start loads."""
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "save"], capture_output=True, timeout=10)
        if self.process is not None:
            self.process.wait(10)


def _redis_caches(url: str) -> dict[str, dict[str, Any]]:
    options = {"CLIENT_CLASS": "django_redis.client.DefaultClient", "IGNORE_EXCEPTIONS": True}
    backend = "django_redis.cache.RedisCache"
    return {
        **settings.CACHES,
        "default": {"BACKEND": backend, "LOCATION": url, "KEY_PREFIX": "ca", "OPTIONS": options},
    }


@pytest.mark.django_db(transaction=True)
def test_a_redis_back_from_an_outage_serves_no_context_cached_before_a_write_made_during_it(tmp_path: Path) -> None:
    redis = PersistentRedis(free_port(), tmp_path)
    redis.start()
    try:
        with override_settings(CACHES=_redis_caches(redis.url)):
            tenant = make_tenant("outage")
            item = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": SECRET, "pinned": True}
            written = tenant.client.post("/api/v1/items/", item, format="json").json()
            assert background.wait_idle(120)  # the item's embedding is written (a new version) first
            query = {"layer": tenant.root.pk, "query": "What is the vault passphrase?", "token_budget": 300}
            query["timeout_ms"] = 20000
            for _ in range(2):
                answer = tenant.client.post("/api/v1/context/", query, format="json").json()
            assert answer["cached"] and "tangerine-42" in answer["context"]

            redis.stop()
            assert tenant.client.delete(f"/api/v1/items/{written['id']}/").status_code == 204
            assert not Item.objects.filter(pk=written["id"]).exists()
            redis.start()
            cache.objects_clear()

            answer = tenant.client.post("/api/v1/context/", query, format="json").json()
            assert "tangerine-42" not in answer["context"], answer
    finally:
        redis.stop()


def _read_elsewhere(workspace_id: int) -> str:
    seen: list[str] = []

    def read() -> None:
        try:
            seen.append(versions.content_version(workspace_id))
        finally:
            connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(30)
    return seen[0]


@pytest.mark.django_db(transaction=True)
def test_a_change_counts_for_others_when_it_commits_and_for_its_writer_at_once() -> None:
    workspace_id = make_tenant("counted").workspace.pk
    before = versions.content_version(workspace_id)
    with transaction.atomic():
        versions.content_changed(workspace_id)
        mine = versions.content_version(workspace_id)
        assert mine != before and versions.content_version(workspace_id) == mine  # stable until the next change
        assert _read_elsewhere(workspace_id) == before  # not committed yet
        versions.content_changed(workspace_id)
        assert versions.content_version(workspace_id) != mine
    after = versions.content_version(workspace_id)
    assert after not in (before, mine) and _read_elsewhere(workspace_id) == after
    with transaction.atomic():
        versions.content_changed(workspace_id)
        transaction.set_rollback(True)
    assert versions.content_version(workspace_id) == after  # a rolled-back change counts for nobody
