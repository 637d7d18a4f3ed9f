"""With REDIS_URL set, writes dispatch their background work to a real Celery worker via Redis.

Both sides run as the service would: a process configured with REDIS_URL creates items (its
on-commit dispatch goes to the broker), and a `celery worker` process embeds them.
"""

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

from apps.layers.models import Item
from tests.conftest import make_tenant
from tests.processes import database_url

ROOT = Path(__file__).resolve().parents[2]
BROKER = "redis://127.0.0.1:6379/13"

WRITE = """
from django.conf import settings
from apps.core import background
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create
root = Layer.objects.get(workspace__slug="celery", kind="company")
items_create(layer=root, items=[ItemInput(kind="memory", type="fact", content=f"Fact {i}.") for i in range(12)])
print("mode", settings.BACKGROUND_MODE, "in-process idle", background.wait_idle(1))
"""


@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_embeds_items_dispatched_through_redis() -> None:
    make_tenant("celery")
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
    assert Item.objects.filter(embedding__isnull=True).count() == 12  # nobody has embedded them yet
    # the embedding task waits in the broker (beside the summary change trigger: 12 changes ≥ 10)
    queued = [json.loads(raw)["headers"]["task"] for raw in broker.lrange("celery", 0, -1)]
    assert queued.count("apps.layers.tasks.embed_pending_items") == 1

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
        while time.time() < deadline and Item.objects.filter(embedding__isnull=True).exists():
            assert worker.poll() is None, worker.communicate()[0][-3000:]
            time.sleep(0.5)
        assert not Item.objects.filter(embedding__isnull=True).exists()
        assert broker.llen("celery") == 0
    finally:
        worker.terminate()
        worker.wait(30)
        broker.flushdb()
