"""With REDIS_URL set, an item write dispatches the summary task through Redis to a real Celery worker."""

from __future__ import annotations

import pytest

from apps.layers.services import layer_create
from apps.summaries.models import Summary
from tests.support.processes import CeleryBroker
from tests.support.tenants import make_tenant

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


@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_runs_the_summary_task_dispatched_through_redis() -> None:
    tenant = make_tenant("celery-summaries")
    project = layer_create(workspace=tenant.workspace, kind="project", name="Retry queue", parent=tenant.root)
    session = layer_create(workspace=tenant.workspace, kind="session", name="Session", parent=project)
    broker = CeleryBroker(BROKER)
    assert "mode celery" in broker.shell(WRITE)
    # the session's change trigger (every change) waits in the broker beside the embedding sweep
    assert "apps.summaries.tasks.summarize_layer_if_due" in broker.queued_tasks()
    assert not Summary.objects.filter(layer=session).exists()

    with broker.worker() as worker:
        broker.wait_for(worker, lambda: Summary.objects.filter(layer=session).count() >= 3)
        rows = {s.depth: s for s in Summary.objects.filter(layer=session, personalized_for__isnull=True)}
        assert set(rows) == {"sentence", "paragraph", "detailed"}
        assert all(r.provider == "extractive" and "Retry-After" in r.text for r in rows.values())
