"""With REDIS_URL set, an item write dispatches the summary task through Redis to a real Celery worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.db import connection

from apps.layers.services import layer_create
from apps.summaries.models import Summary
from tests.conftest import make_tenant
from tests.processes import database_url

ROOT = Path(__file__).resolve().parents[2]
BROKER = "redis://127.0.0.1:6379/12"

WRITE = """
from django.conf import settings
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create
session = Layer.objects.get(workspace__slug="celery-summaries", kind="session")
fact = "The retry worker honours Retry-After now. It keeps three retries."
items_create(layer=session, items=[ItemInput(kind="memory", type="fact", content=fact)])
print("mode", settings.BACKGROUND_MODE)
"""


def _queued_tasks(broker: redis.Redis) -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in broker.lrange("celery", 0, -1)]


@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_runs_the_summary_task_dispatched_through_redis() -> None:
    tenant = make_tenant("celery-summaries")
    project = layer_create(workspace=tenant.workspace, kind="project", name="Retry queue", parent=tenant.root)
    session = layer_create(workspace=tenant.workspace, kind="session", name="Session", parent=project)
    broker = redis.Redis.from_url(BROKER)
    broker.flushdb()
    env = dict(os.environ, REDIS_URL=BROKER, DATABASE_URL=database_url(connection.settings_dict), OMP_NUM_THREADS="1")
    writer = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", WRITE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert writer.returncode == 0, writer.stderr[-2000:]
    assert "mode celery" in writer.stdout
    # the session's change trigger (every change) waits in the broker beside the embedding sweep
    assert "apps.summaries.tasks.summarize_layer_if_due" in _queued_tasks(broker)
    assert not Summary.objects.filter(layer=session).exists()

    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "contextarch", "worker", "--pool", "solo", "--loglevel", "WARNING"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and Summary.objects.filter(layer=session).count() < 3:
            assert worker.poll() is None, worker.communicate()[0][-3000:]
            time.sleep(0.5)
        rows = {s.depth: s for s in Summary.objects.filter(layer=session, personalized_for__isnull=True)}
        assert set(rows) == {"sentence", "paragraph", "detailed"}
        assert all(r.provider == "extractive" and "Retry-After" in r.text for r in rows.values())
    finally:
        worker.terminate()
        worker.wait(30)
        broker.flushdb()
