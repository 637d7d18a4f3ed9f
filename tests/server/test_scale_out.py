"""The scale-out form as docker-compose.yml wires it: two server instances, a Celery worker and
Celery beat on one PostgreSQL with pgvector and one Redis. A write through one instance is embedded
by the worker, pushed to a status WebSocket held on the other, and a context assembled through
the other is served from the shared cache by the first."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import websockets
from django.conf import settings
from django.db import connection

from apps.layers.models import Item
from tests.support.processes import database_url, free_port, http_json, private_redis, served
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.server

REDIS_PORT = 6392


@contextmanager
def celery(env: dict[str, str], log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "contextarch", *args, "--loglevel", "INFO"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        process.terminate()
        process.wait(30)


async def _status_pushes(url: str, key: str, write: Any, until: Any, timeout: float = 120) -> list[dict[str, Any]]:
    """Subscribe on `url`, run `write()` (in a thread), collect status pushes until `until(data)`."""
    seen: list[dict[str, Any]] = []
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        await ws.send(json.dumps({"type": "status"}))
        seen.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
        await asyncio.to_thread(write)
        async with asyncio.timeout(timeout):
            while not until(seen[-1]["data"]):
                seen.append(json.loads(await ws.recv()))
    return seen


@pytest.mark.django_db(transaction=True)
def test_two_instances_a_worker_and_beat_share_the_cache_and_the_websocket_events(tmp_path: Path) -> None:
    tenant = make_tenant("scaled")
    auth = {"Authorization": f"Bearer {tenant.secret}"}
    with private_redis(REDIS_PORT, tmp_path) as redis_server:
        env = {
            **os.environ,
            "DATABASE_URL": database_url(connection.settings_dict),
            "REDIS_URL": redis_server.url,
            "OMP_NUM_THREADS": "1",
        }
        with (
            celery(env, tmp_path / "worker.log", "worker", "--pool", "solo"),
            celery(env, tmp_path / "beat.log", "beat", "--schedule", str(tmp_path / "beat-schedule")),
            served(env, free_port(), tmp_path / "a.log") as first,
            served(env, free_port(), tmp_path / "b.log") as second,
        ):
            facts = ["Database backups are kept for 35 days.", "Restores are tested on the first Monday."]
            body = {"layer": tenant.root.pk, "items": [{"kind": "memory", "type": "fact", "content": c} for c in facts]}

            def write_through_first() -> None:
                status, headers, answer = http_json("POST", f"{first}/api/v1/items/bulk/", body, auth)
                assert status == 201 and "warning" not in headers, answer  # queued on the broker

            ws_url = second.replace("http://", "ws://") + "/ws/v1/status/"
            pushes = asyncio.run(
                _status_pushes(
                    ws_url,
                    tenant.secret,
                    write_through_first,
                    lambda d: d["items"] == 2 and not d["items_pending_embedding"],
                )
            )
            assert pushes[0]["data"]["items"] == 0 and len(pushes) >= 2  # pushed, not polled
            assert pushes[-1]["data"]["background"]["mode"] == "celery"
            assert not Item.objects.filter(workspace=tenant.workspace, embedding__isnull=True).exists()
            assert all(m.startswith("local:") for m in Item.objects.values_list("embedding_model", flat=True))

            # Beat's sweeps (summaries of the new items, communities) run on the worker meanwhile and
            # may change the workspace's content version between two requests, which is a rightful
            # miss; the cache must cross instances once they are done (three tries).
            query = {"layer": tenant.root.pk, "query": "How long are backups kept?", "token_budget": 200}
            pairs = []
            for _ in range(3):
                status, _, assembled = http_json("POST", f"{second}/api/v1/context/", query, auth)
                assert status == 200 and "35 days" in assembled["context"], assembled
                status, _, again = http_json("POST", f"{first}/api/v1/context/", query, auth)
                assert status == 200, again
                pairs.append((assembled["trace_id"], again["cached"], again["trace_id"]))
                if again["cached"] and again["trace_id"] == assembled["trace_id"]:
                    break
                time.sleep(5)
            assert pairs[-1][1] is True and pairs[-1][0] == pairs[-1][2], pairs

        assert "beat: Starting" in (tmp_path / "beat.log").read_text()
