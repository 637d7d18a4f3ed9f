"""With REDIS_URL set, writes dispatch their background work to a real Celery worker via Redis.

Both sides run as the service would: a process configured with REDIS_URL creates items (its
on-commit dispatch goes to the broker), and a `celery worker` process embeds them.
"""

from __future__ import annotations

import pytest

from apps.layers.models import Item
from tests.support.processes import CeleryBroker
from tests.support.tenants import make_tenant

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
    broker = CeleryBroker(BROKER)
    assert "mode celery" in broker.shell(WRITE)
    assert Item.objects.filter(embedding__isnull=True).count() == 12  # nobody has embedded them yet
    # the embedding task waits in the broker (beside the summary change trigger: 12 changes ≥ 10)
    assert broker.queued_tasks().count("apps.layers.tasks.embed_pending_items") == 1

    def drained() -> bool:
        # the tasks the write queued queue their own follow-ups (a summary written is then embedded),
        # so the worker is done when the items are embedded and the broker holds nothing more
        return not Item.objects.filter(embedding__isnull=True).exists() and broker.redis.llen("celery") == 0

    with broker.worker() as worker:
        broker.wait_for(worker, drained)
        assert not Item.objects.filter(embedding__isnull=True).exists()
        assert broker.redis.llen("celery") == 0
