"""A task id repeated on one message is one membership (issue 25, finding 9): deduplicated when
written, and rows stored before that still make their communities once."""

from __future__ import annotations

import pytest

from apps.conversations.models import Community, CommunityMember
from apps.conversations.tasks import sweep_communities
from apps.layers.models import Item
from tests.conversations.sessions import message
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_a_message_with_a_repeated_task_id_stores_it_once(tenant: Tenant, session: int) -> None:
    created = message(tenant, session, "Deploy the API.", task_ids=["T-dup", "T-2", "T-dup"])
    assert Item.objects.get(pk=created).task_ids == ["T-dup", "T-2"]
    changed = tenant.client.patch(f"/api/v1/items/{created}/", {"task_ids": ["T-3", "T-3"]}, format="json")
    assert changed.status_code == 200 and changed.json()["task_ids"] == ["T-3"]


def test_communities_of_messages_stored_with_repeated_task_ids_are_made_once(tenant: Tenant, session: int) -> None:
    ids = [message(tenant, session, f"Step {i} of the deploy.", task_ids=["T-dup"]) for i in range(3)]
    Item.objects.filter(pk__in=ids).update(task_ids=["T-dup", "T-dup"])  # as stored before the fix
    assert sweep_communities.run() >= 1  # the background sweep (it raised IntegrityError on every run)
    community = Community.objects.get(layer_id=session, key="T-dup")
    assert CommunityMember.objects.filter(community=community).count() == 3
    response = tenant.client.post(f"/api/v1/layers/{session}/communities/", format="json")
    assert response.status_code == 200, response.content
    task = next(c for c in response.json()["results"] if c["key"] == "T-dup")
    assert task["members"] == ids
